import { Value } from '@sinclair/typebox/value'
import { needsJsonEscape, parseJsonText } from '@tracewell/json-text'
import type { AttributeMap, SpanRecord } from '@tracewell/otlp'
import { QueuedSpanSchema, type ProjectSpans, type SpanBatchJob } from './span-batch.contract.ts'

// BullMQ reads job data back with JSON.parse, which on Node 24 can return the wrong object key
// for a key written with an escape sequence (see @tracewell/json-text). Such keys are rare (an
// attribute named with a quote, a backslash or a control character), so only the spans that have
// one travel differently: as one JSON text in `spansJson`, a string value that JSON.parse reads
// intact and the writer decodes with parseJsonText.

const hasKeyNeedingEscape = (map: AttributeMap): boolean => {
  for (const key in map) if (needsJsonEscape(key)) return true
  return false
}

/** Whether any attribute map of the span has a key JSON can only write with an escape sequence. */
export function spanHasKeyNeedingEscape(span: SpanRecord): boolean {
  return (
    hasKeyNeedingEscape(span.attributes) ||
    hasKeyNeedingEscape(span.resourceAttributes) ||
    span.events.some((event) => hasKeyNeedingEscape(event.attributes)) ||
    span.links.some((link) => hasKeyNeedingEscape(link.attributes))
  )
}

/** The job as it is written to Redis: spans with escaped keys moved into `spansJson`. */
export function encodeForRedis(job: SpanBatchJob): SpanBatchJob {
  if (!job.batches.some((batch) => batch.spans.some(spanHasKeyNeedingEscape))) return job
  return { ...job, batches: job.batches.map(encodeBatch) }
}

function encodeBatch(batch: ProjectSpans): ProjectSpans {
  const escaped = batch.spans.filter(spanHasKeyNeedingEscape)
  if (escaped.length === 0) return batch
  return { projectId: batch.projectId, spans: batch.spans.filter((span) => !spanHasKeyNeedingEscape(span)), spansJson: JSON.stringify(escaped) }
}

/**
 * Every span of a batch as read from Redis. Throws a SyntaxError when `spansJson` is not a JSON
 * array of objects with the fields SpanBatchJobSchema checks on `spans`.
 */
export function spansOfBatch(batch: ProjectSpans): SpanRecord[] {
  if (batch.spansJson === undefined) return batch.spans
  let decoded: unknown
  try {
    decoded = parseJsonText(batch.spansJson)
  } catch (error) {
    throw new SyntaxError(`spansJson is not valid JSON: ${(error as Error).message}`, { cause: error })
  }
  if (!Array.isArray(decoded)) throw new SyntaxError('spansJson is not a JSON array')
  decoded.forEach((span, index) => {
    if (!Value.Check(QueuedSpanSchema, span)) throw new SyntaxError(`spansJson/${index} is not a span`)
  })
  return [...batch.spans, ...(decoded as SpanRecord[])]
}
