import type { SpanBatchProducer } from '@tracewell/queue'
import { Counter, Gauge, type Registry } from 'prom-client'
import type { TraceDecodePool } from './body/trace-decode.pool.ts'

/** Why a trace request was turned away; the `reason` label of tracewell_ingest_rejections_total. */
export type RejectionReason =
  | 'unauthorized'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'invalid'
  | 'backlog_full'
  | 'rate_limited'
  | 'queue_unavailable'
  | 'decoders_busy'
  | 'internal'

/** What the trace routes count; rendered by prom-client when /metrics is scraped. */
export interface IngestMetrics {
  /** One answered trace request: its route, body format and outcome ('accepted' or the rejection reason). */
  request(route: string, format: string, outcome: 'accepted' | RejectionReason): void
  spansAccepted(count: number): void
  /** Spans refused one by one in requests that were otherwise accepted (partial success). */
  spansRejected(count: number): void
}

/**
 * The rejection reason an answer's status stands for; undefined for a success. A 429 is a
 * project over its rate limit when `rateLimited` (the answer carries the rate-limit fields), else
 * a full backlog; a 503 is the queue unavailable unless this ingest's decoders were busy
 * (`decodersBusy`).
 */
export function rejectionReasonOf(statusCode: number, rateLimited = false, decodersBusy = false): RejectionReason | undefined {
  if (statusCode < 400) return undefined
  if (statusCode === 429 && rateLimited) return 'rate_limited'
  if (statusCode === 503 && decodersBusy) return 'decoders_busy'
  switch (statusCode) {
    // 403: a key whose scopes do not take traces, refused for who it is as an invalid key is.
    case 401:
    case 403:
      return 'unauthorized'
    case 413:
      return 'payload_too_large'
    case 415:
      return 'unsupported_media_type'
    case 429:
      return 'backlog_full'
    case 503:
      return 'queue_unavailable'
    default:
      return statusCode >= 500 ? 'internal' : 'invalid'
  }
}

/** Counts by label values, in nested maps so that counting allocates nothing once a series exists. */
class LabelledCounts {
  readonly #counts = new Map<string, Map<string, Map<string, number>>>()

  add(a: string, b: string, c: string, amount = 1): void {
    let byB = this.#counts.get(a)
    if (byB === undefined) this.#counts.set(a, (byB = new Map()))
    let byC = byB.get(b)
    if (byC === undefined) byB.set(b, (byC = new Map()))
    byC.set(c, (byC.get(c) ?? 0) + amount)
  }

  *entries(): Generator<[string, string, string, number]> {
    for (const [a, byB] of this.#counts) for (const [b, byC] of byB) for (const [c, count] of byC) yield [a, b, c, count]
  }
}

const countsByRegistry = new WeakMap<Registry, IngestMetrics>()

/**
 * The ingest metrics in the app's registry, created once per registry: the trace routes may be
 * registered more than once in one app (the all-in-one process), and prom-client refuses a second
 * metric of the same name. Requests are counted as plain numbers and handed to prom-client when
 * /metrics is scraped: a labelled `inc()` validates and hashes its labels on every call, a
 * visible share of a 1-span request (as for the control plane's prompt cache).
 */
export function ingestMetrics(registry: Registry, producer: SpanBatchProducer): IngestMetrics {
  const existing = countsByRegistry.get(registry)
  if (existing) return existing
  const requests = new LabelledCounts()
  let spansAccepted = 0
  let spansRejected = 0
  new Counter({
    name: 'tracewell_ingest_requests_total',
    help: 'Trace requests by route, body format (json, protobuf, other) and outcome (accepted or the rejection reason)',
    labelNames: ['route', 'format', 'outcome'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const [route, format, outcome, count] of requests.entries()) this.inc({ route, format, outcome }, count)
    },
  })
  new Counter({
    name: 'tracewell_ingest_spans_accepted_total',
    help: 'Spans durably queued for the writer',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(spansAccepted)
    },
  })
  new Counter({
    name: 'tracewell_ingest_spans_rejected_total',
    help: 'Invalid spans refused in requests whose other spans were accepted (OTLP partial success)',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(spansRejected)
    },
  })
  new Counter({
    name: 'tracewell_ingest_rejections_total',
    help: 'Trace requests turned away, by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
    // Derived from the request counts: a rejection is a request whose outcome is its reason.
    collect() {
      this.reset()
      for (const [, , outcome, count] of requests.entries()) if (outcome !== 'accepted') this.inc({ reason: outcome }, count)
    },
  })
  new Gauge({
    name: 'tracewell_ingest_queue_backlog_spans',
    help: 'Spans waiting in the queue, as last measured by the producer (admission control bound: QUEUE_MAX_BACKLOG)',
    registers: [registry],
    collect() {
      this.set(producer.backlog())
    },
  })
  new Gauge({
    name: 'tracewell_ingest_queue_backlog_bytes',
    help: 'Request-body bytes waiting in the queue, as last measured by the producer (admission control bound: QUEUE_MAX_BACKLOG_BYTES)',
    registers: [registry],
    collect() {
      this.set(producer.backlogBytes())
    },
  })
  new Gauge({
    name: 'tracewell_ingest_queue_shards_unwritable',
    help: 'Shards of the queue that cannot take writes now (their master is down or lacks QUEUE_REPLICA_ACKS replicas): their projects are answered 503',
    registers: [registry],
    collect() {
      this.set(producer.unwritableShards?.().length ?? 0)
    },
  })
  new Gauge({
    name: 'tracewell_ingest_queue_shard_unwritable',
    help: 'Set to 1 for each shard of the queue that cannot take writes now, by shard index',
    labelNames: ['shard'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const shard of producer.unwritableShards?.() ?? []) this.set({ shard: String(shard.shard) }, 1)
    },
  })
  const metrics: IngestMetrics = {
    request(route, format, outcome) {
      requests.add(route, format, outcome)
    },
    spansAccepted(count) {
      spansAccepted += count
    },
    spansRejected(count) {
      spansRejected += count
    },
  }
  countsByRegistry.set(registry, metrics)
  return metrics
}

/** The decode pool's counts, read when /metrics is scraped. */
export function decodePoolMetrics(registry: Registry, pool: TraceDecodePool): void {
  new Counter({
    name: 'tracewell_ingest_worker_decodes_total',
    help: 'Request bodies over 256 KiB decoded in a worker thread (DECODE_THREADS) instead of the main thread',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(pool.decoded)
    },
  })
  new Counter({
    name: 'tracewell_ingest_worker_decodes_refused_total',
    help: 'Request bodies answered 503 because every decode worker was busy and its queue full',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(pool.refusedBusy)
    },
  })
  new Gauge({
    name: 'tracewell_ingest_worker_decodes_waiting',
    help: 'Request bodies waiting for a decode worker',
    registers: [registry],
    collect() {
      this.set(pool.waiting)
    },
  })
}
