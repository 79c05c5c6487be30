// cluster-key-slot (the CRC16 slot function ioredis itself uses) ships without type declarations.
declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot (0–16383) of a key, honouring a `{hash tag}`. */
  export default function calculateSlot(key: string | Buffer): number
}
