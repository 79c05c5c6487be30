import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { decodeSpanRecords, decodeTraceBody, type SpanRecord } from '@tracewell/otlp'
import { acceptedTraces } from '@tracewell/test-support'
import { Redis } from 'ioredis'
import { readJobBodies, type ProjectSpans, type SpanBatchProducer } from '../src/index.ts'

const hex = (bytes: number) => randomBytes(bytes).toString('hex')

/** A valid span record, as ingest would hand it to the queue. */
export function makeSpan(overrides: Partial<SpanRecord> = {}): SpanRecord {
  return {
    traceId: hex(16),
    spanId: hex(8),
    parentSpanId: null,
    name: 'openai.chat.completions.create',
    kind: 3,
    startTimeUnixNano: '1700000000000000000',
    endTimeUnixNano: '1700000001500000000',
    traceState: null,
    statusCode: 1,
    statusMessage: null,
    attributes: { 'gen_ai.request.model': { stringValue: 'gpt-4o' } },
    resourceAttributes: { 'service.name': { stringValue: 'test-service' } },
    scopeName: 'langtrace',
    scopeVersion: '1.0.0',
    events: [],
    links: [],
    serviceName: 'test-service',
    serviceVersion: null,
    llmVendor: 'openai',
    llmModel: 'gpt-4o',
    llmRequestType: 'chat',
    inputTokens: 10,
    outputTokens: 20,
    totalTokens: 30,
    durationNs: '1500000000',
    ...overrides,
  }
}

export const makeSpans = (count: number): SpanRecord[] => Array.from({ length: count }, () => makeSpan())

/** Enqueues spans as ingest does: the records with the request body they came from. */
export const enqueueSpans = (producer: SpanBatchProducer, projectId: string, spans: SpanRecord[]): Promise<void> => producer.enqueue(acceptedTraces(projectId, spans))

/** A throwaway redis-server of our own, so outage tests never touch the shared one on 6379. */
export class OwnRedis {
  readonly port: number
  #process: ChildProcess | null = null

  constructor(port: number) {
    this.port = port
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    this.#process = child
    const client = new Redis(this.url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 })
    client.on('error', () => {})
    for (let i = 0; i < 100; i++) {
      try {
        await client.connect()
        await client.ping()
        client.disconnect()
        return
      } catch {
        await sleep(50)
      }
    }
    throw new Error(`redis-server on port ${this.port} did not start`)
  }

  async kill(): Promise<void> {
    const child = this.#process
    if (!child || child.exitCode !== null) return
    this.#process = null
    child.kill('SIGKILL')
    await once(child, 'exit')
  }
}

/**
 * Every span of a queued job, read and decoded as the writer does (apps/writer decodes; this
 * package only carries the bytes, so its tests decode with @tracewell/otlp themselves).
 */
export async function spansOfJob(redis: Redis, job: unknown): Promise<ProjectSpans[]> {
  return (await readJobBodies(redis, job)).map(({ projectId, body, encoding }) => ({ projectId, spans: encoding === 'records' ? decodeSpanRecords(body) : decodeTraceBody(body, encoding).spans }))
}
