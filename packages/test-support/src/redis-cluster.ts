import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'

const run = promisify(execFile)

export interface OwnRedisClusterOptions {
  /** The first of the consecutive ports the nodes listen on (masters first, then replicas). */
  basePort: number
  masters: number
  /** Replicas per master (default 0). */
  replicas?: number
}

/**
 * A throwaway Redis Cluster of `redis-server --cluster-enabled yes` processes on private ports
 * (no Docker), formed with `redis-cli --cluster create`, for tests that need real slots, MOVED
 * redirects, failovers and restarts. Every node appends every write to its AOF with
 * `appendfsync always`, so a node killed and started again comes back with every write it
 * acknowledged; `cluster-require-full-coverage no` keeps the other masters' slots served while
 * one master is down, as docs/operations.md recommends.
 */
export class OwnRedisCluster {
  readonly #options: Required<OwnRedisClusterOptions>
  readonly #dir = mkdtempSync(join(tmpdir(), 'tracewell-redis-cluster-'))
  readonly #processes = new Map<number, ChildProcess>()

  constructor(options: OwnRedisClusterOptions) {
    this.#options = { replicas: 0, ...options }
  }

  get ports(): number[] {
    const count = this.#options.masters * (1 + this.#options.replicas)
    return Array.from({ length: count }, (_, index) => this.#options.basePort + index)
  }

  /** REDIS_CLUSTER_NODES for this cluster. */
  get seeds(): string {
    return this.ports.map((port) => `127.0.0.1:${port}`).join(',')
  }

  async start(): Promise<void> {
    await Promise.all(this.ports.map((port) => this.startNode(port)))
    await run('redis-cli', ['--cluster', 'create', ...this.ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', String(this.#options.replicas), '--cluster-yes'])
    await this.waitUntilHealthy()
  }

  /** Starts (or starts again, with its AOF and nodes.conf) the node on `port`. */
  async startNode(port: number): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port', String(port), '--bind', '127.0.0.1', '--dir', this.#dir, '--save', '',
        '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '1000',
        '--cluster-require-full-coverage', 'no', '--cluster-replica-validity-factor', '0',
        '--appendonly', 'yes', '--appendfilename', `appendonly-${port}.aof`, '--appenddirname', `aof-${port}`, '--appendfsync', 'always',
      ],
      { stdio: 'ignore' },
    )
    this.#processes.set(port, child)
    for (let attempt = 0; attempt < 200; attempt++) {
      if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${child.exitCode}`)
      if (await answers(port)) return
      await sleep(25)
    }
    throw new Error(`redis-server on port ${port} did not start`)
  }

  /** SIGKILLs the node on `port`: no shutdown, no final AOF rewrite. */
  async kill(port: number): Promise<void> {
    const child = this.#processes.get(port)
    if (!child || child.exitCode !== null) return
    child.kill('SIGKILL')
    await once(child, 'exit')
  }

  /** The port of the master that serves `slot` now, as the cluster itself says. */
  async masterOf(slot: number): Promise<number> {
    for (const port of this.ports) {
      const ranges = (await withNode(port, (redis) => redis.cluster('SLOTS')).catch(() => null)) as unknown as Array<[number, number, [string, number]]> | null
      if (!ranges) continue
      for (const [from, to, master] of ranges) if (slot >= from && slot <= to) return master[1]
    }
    throw new Error(`no master serves slot ${slot}`)
  }

  /**
   * Waits until every live node says cluster_state:ok and agrees on the masters of all slots, and
   * every live replica's link to its master is up (its first sync done): until then a master's
   * WAIT finds no replica, which a test of QUEUE_REPLICA_ACKS would take for a failure.
   */
  async waitUntilHealthy(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      const live = this.ports.filter((port) => this.#processes.get(port)?.exitCode === null)
      const states = await Promise.all(live.map((port) => withNode(port, async (redis) => `${await redis.cluster('INFO')}\n${await redis.info('replication')}`).catch(() => '')))
      const replicaLinksUp = (info: string) => !/^role:slave/m.test(info) || /^master_link_status:up/m.test(info)
      if (states.every((info) => /^cluster_state:ok/m.test(info) && /^cluster_slots_ok:16384/m.test(info) && replicaLinksUp(info))) return
      await sleep(100)
    }
    throw new Error('the Redis Cluster did not become healthy')
  }

  async stop(): Promise<void> {
    await Promise.all(this.ports.map((port) => this.kill(port)))
    rmSync(this.#dir, { recursive: true, force: true })
  }
}

async function answers(port: number): Promise<boolean> {
  return withNode(port, async (redis) => (await redis.ping()) === 'PONG').catch(() => false)
}

async function withNode<T>(port: number, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1_000 })
  redis.on('error', () => {})
  try {
    await redis.connect()
    return await use(redis)
  } finally {
    redis.disconnect()
  }
}
