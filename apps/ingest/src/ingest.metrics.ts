import type { SpanBatchProducer } from '@tracewell/queue'
import { Counter, Gauge, type Registry } from 'prom-client'

/** Why a trace request was turned away; the `reason` label of ingest_rejections_total. */
export type RejectionReason =
  | 'unauthorized'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'invalid'
  | 'backlog_full'
  | 'queue_unavailable'
  | 'internal'

export interface IngestMetrics {
  requests: Counter<'route' | 'format' | 'outcome'>
  spansAccepted: Counter
  rejections: Counter<'reason'>
}

/** The rejection reason an answer's status stands for; undefined for a success. */
export function rejectionReasonOf(statusCode: number): RejectionReason | undefined {
  if (statusCode < 400) return undefined
  switch (statusCode) {
    case 401:
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

/**
 * The ingest metrics in the app's registry. Metrics are created once per registry: the trace
 * routes may be registered more than once in one app (the all-in-one process), and prom-client
 * refuses a second metric of the same name.
 */
export function ingestMetrics(registry: Registry, producer: SpanBatchProducer): IngestMetrics {
  const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined
  const requests =
    existing<IngestMetrics['requests']>('ingest_requests_total') ??
    new Counter({
      name: 'ingest_requests_total',
      help: 'Trace requests by route, body format (json, protobuf, other) and outcome (accepted or the rejection reason)',
      labelNames: ['route', 'format', 'outcome'] as const,
      registers: [registry],
    })
  const spansAccepted =
    existing<Counter>('ingest_spans_accepted_total') ??
    new Counter({ name: 'ingest_spans_accepted_total', help: 'Spans durably queued for the writer', registers: [registry] })
  const rejections =
    existing<IngestMetrics['rejections']>('ingest_rejections_total') ??
    new Counter({
      name: 'ingest_rejections_total',
      help: 'Trace requests turned away, by reason',
      labelNames: ['reason'] as const,
      registers: [registry],
    })
  if (!existing('ingest_queue_backlog_spans')) {
    new Gauge({
      name: 'ingest_queue_backlog_spans',
      help: 'Spans waiting in the queue, as last measured by the producer (admission control bound: QUEUE_MAX_BACKLOG)',
      registers: [registry],
      collect() {
        this.set(producer.backlog())
      },
    })
  }
  return { requests, spansAccepted, rejections }
}
