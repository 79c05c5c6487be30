import { Value } from '@sinclair/typebox/value'
import { parseJsonText } from '@tracewell/json-text'
import type { SpanRecord } from '@tracewell/otlp'
import { QueuedSpanSchema, type ProjectSpans } from './span-batch.contract.ts'

// Version 1 BullMQ producers moved spans with an attribute key that JSON writes with an escape
// sequence into `spansJson`, one JSON text: BullMQ reads job data back with JSON.parse, which on
// Node 24 can return the wrong object key for such a key (see @tracewell/json-text). Version 2
// jobs carry request bodies instead, which the writer parses with parseJsonText; jobs of the
// previous version may still be queued, so they are still read here.

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
