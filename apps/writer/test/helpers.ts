import { execFile } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { createDb, migrateToLatest } from '@tracewell/db'
import { decodeJsonTraces, type SpanRecord } from '@tracewell/otlp'
import { createSpanBatchQueueConnection, QueueNames, type SpanBatchJob, type SpanBatchProducer } from '@tracewell/queue'
import { acceptedTraces } from '@tracewell/test-support'
import { Queue } from 'bullmq'

const run = promisify(execFile)

/** The spans of a real Langtrace Python SDK request, decoded as ingest decodes them. */
export const fixtureSpans: SpanRecord[] = decodeJsonTraces(
  JSON.parse(readFileSync(new URL('../../../test-fixtures/langtrace-python-legacy.json', import.meta.url), 'utf8')),
).spans

/** `count` spans shaped like the fixture's, each with fresh ids. */
export function makeSpans(count: number): SpanRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    ...(fixtureSpans[i % fixtureSpans.length] as SpanRecord),
    traceId: randomBytes(16).toString('hex'),
    spanId: randomBytes(8).toString('hex'),
  }))
}

/** Enqueues spans as ingest does: the records with the request body they came from. */
export const enqueueSpans = (producer: SpanBatchProducer, projectId: string, spans: SpanRecord[]): Promise<void> => producer.enqueue(acceptedTraces(projectId, spans))

export const testPrefix = () => `test-${randomUUID()}`

/** The span-batch queue as a test inspects it. */
export function openQueue(redisUrl: string, prefix: string) {
  const connection = createSpanBatchQueueConnection(redisUrl, 'worker')
  const queue = new Queue<SpanBatchJob>(QueueNames.spanBatches, { connection, prefix })
  return {
    queue,
    async close() {
      await queue.obliterate({ force: true }).catch(() => {})
      await queue.close()
      connection.disconnect()
    },
  }
}

export async function waitFor<T>(what: string, probe: () => Promise<T | false | undefined | null>, timeoutMs = 20_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(everyMs)
  }
}

const pgVersion = readdirSync('/usr/lib/postgresql').sort().at(-1) ?? '15'
const pgBin = (name: string) => `/usr/lib/postgresql/${pgVersion}/bin/${name}`

/**
 * A throwaway Postgres cluster of our own (initdb in a temp dir, run as user postgres), so outage
 * tests can stop it without touching the shared one on 5432.
 */
export class OwnPostgres {
  readonly port: number
  readonly dir: string

  constructor(port: number) {
    this.port = port
    this.dir = mkdtempSync(join(tmpdir(), 'tracewell-pg-'))
    chmodSync(this.dir, 0o777)
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`
  }

  async #asPostgres(command: string, args: string[]): Promise<void> {
    await run('su', ['postgres', '-c', [pgBin(command), ...args.map((arg) => `'${arg}'`)].join(' ')])
  }

  async init(): Promise<void> {
    await this.#asPostgres('initdb', ['-D', join(this.dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync'])
    await this.start()
    const db = createDb({ databaseUrl: this.url, poolSize: 1 })
    await migrateToLatest(db)
    await db.destroy()
  }

  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`
    await this.#asPostgres('pg_ctl', ['-D', join(this.dir, 'data'), '-o', options, '-l', join(this.dir, 'log'), '-w', 'start'])
  }

  async stop(): Promise<void> {
    await this.#asPostgres('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']).catch(() => {})
  }

  async destroy(): Promise<void> {
    await this.stop()
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/**
 * Waits until a producer's Redis connection is up: a producer fails fast after its first second
 * without one (as ingest should), and a loaded machine can take longer than that to connect.
 */
export const producerConnected = (producer: SpanBatchProducer) =>
  waitFor('the producer to connect to Redis', () => producer.ping().then(() => true, () => false), 20_000, 100)
