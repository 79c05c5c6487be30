import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { createDb, migrateToLatest } from '@tracewell/db'
import { decodeJsonTraces, encodeSpanRecords, type SpanRecord } from '@tracewell/otlp'
import { createSpanBatchQueueConnection, QueueNames, type SpanBatchJob, type SpanBatchProducer } from '@tracewell/queue'
import { acceptedTraces, OwnPostgres as BaseOwnPostgres } from '@tracewell/test-support'
import { Queue } from 'bullmq'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'

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

/** Enqueues spans as ingest does: the records, and for Redis their 'records' body. */
export const enqueueSpans = (producer: SpanBatchProducer, projectId: string, spans: SpanRecord[]): Promise<void> =>
  producer.enqueue({ projectId, spanCount: spans.length, spans, body: encodeSpanRecords(spans), bodyEncoding: 'records' })

/** Enqueues spans as an ingest before 'records' did: the request body they came from (OTLP JSON). */
export const enqueueRequestBody = (producer: SpanBatchProducer, projectId: string, spans: SpanRecord[]): Promise<void> => producer.enqueue(acceptedTraces(projectId, spans))

export const testPrefix = () => testQueuePrefix()

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

/** A throwaway migrated Postgres of the test's own (see @tracewell/test-support's OwnPostgres). */
export class OwnPostgres extends BaseOwnPostgres {
  override async init(): Promise<void> {
    await super.init()
    const db = createDb({ databaseUrl: this.url, poolSize: 1 })
    await migrateToLatest(db)
    await db.destroy()
  }
}

/**
 * Waits until a producer's Redis connection is up: a producer fails fast after its first second
 * without one (as ingest should), and a loaded machine can take longer than that to connect.
 */
export const producerConnected = (producer: SpanBatchProducer) =>
  waitFor('the producer to connect to Redis', () => producer.ping().then(() => true, () => false), 20_000, 100)
