import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

// Secrets Tracewell must use again later (the API keys of LLM connections), kept sealed with
// AES-256-GCM from node:crypto: a fresh 12-byte nonce per seal, the 16-byte tag checked on opening,
// and a context (what the secret belongs to) bound as additional data, so a sealed value copied
// into another project's row does not open there.

const version = 'v1'
const nonceBytes = 12
const tagBytes = 16

/** The 32-byte key of a 64-hex-character setting (`openssl rand -hex 32`). */
export function encryptionKeyOf(hex: string): Buffer {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error('an encryption key is 64 hex characters (32 bytes)')
  return Buffer.from(hex, 'hex')
}

/** `v1:<base64 of nonce, tag and ciphertext>`. */
export function sealSecret(secret: string, key: Buffer, context: string): string {
  const nonce = randomBytes(nonceBytes)
  const cipher = createCipheriv('aes-256-gcm', key, nonce)
  cipher.setAAD(Buffer.from(context, 'utf8'))
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
  return `${version}:${Buffer.concat([nonce, cipher.getAuthTag(), ciphertext]).toString('base64')}`
}

/** The secret sealed with this key and context; throws when the key, the context or a byte differs. */
export function openSecret(sealed: string, key: Buffer, context: string): string {
  if (!sealed.startsWith(`${version}:`)) throw new Error('not a sealed secret of this version')
  const bytes = Buffer.from(sealed.slice(version.length + 1), 'base64')
  if (bytes.length < nonceBytes + tagBytes) throw new Error('a sealed secret too short to open')
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, nonceBytes))
  decipher.setAAD(Buffer.from(context, 'utf8'))
  decipher.setAuthTag(bytes.subarray(nonceBytes, nonceBytes + tagBytes))
  return Buffer.concat([decipher.update(bytes.subarray(nonceBytes + tagBytes)), decipher.final()]).toString('utf8')
}
