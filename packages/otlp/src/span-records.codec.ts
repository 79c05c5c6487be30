import { isUtf8 } from 'node:buffer'
import { parseJsonText } from '@tracewell/json-text'
import type { AttributeMap, SpanRecord } from './span-record.ts'

// The queue's 'records' body (docs/architecture.md#decode-once): the span records ingest decoded,
// validated, limited, masked and derived, as JSON, so that the writer parses them instead of
// decoding the request again. A resource's attributes are written once and referred to by index:
// every span of a resource shares one object, which the writer's COPY encodes once
// (span-copy.encoder.ts, sharedJsonb) and a 100-span body would otherwise carry a hundred times.

/** The JSON written: `resources`, then each span with `resourceAttributes` as an index into them. */
interface EncodedSpanRecords {
  resources: AttributeMap[]
  spans: Array<Omit<SpanRecord, 'resourceAttributes'> & { resourceAttributes: number }>
}

/** The spans as a 'records' body. */
export function encodeSpanRecords(spans: readonly SpanRecord[]): Buffer {
  const resources: AttributeMap[] = []
  const encoded: string[] = []
  let last: AttributeMap | undefined
  let index = -1
  for (const span of spans) {
    if (span.resourceAttributes !== last) {
      last = span.resourceAttributes
      index = resources.indexOf(last)
      if (index === -1) index = resources.push(last) - 1
    }
    encoded.push(JSON.stringify({ ...span, resourceAttributes: index }))
  }
  return Buffer.from(`{"resources":${JSON.stringify(resources)},"spans":[${encoded.join(',')}]}`)
}

/** Thrown for bytes that are not a 'records' body: only a changed encoder or a foreign writer gets here. */
export class MalformedSpanRecordsError extends Error {
  override name = 'MalformedSpanRecordsError'
}

/** The span records of a 'records' body, each sharing its resource's attributes object. */
export function decodeSpanRecords(body: Uint8Array): SpanRecord[] {
  if (!isUtf8(body)) throw new MalformedSpanRecordsError('not valid UTF-8')
  // parseJsonText, not JSON.parse: attribute keys may be written with escapes (@tracewell/json-text).
  const parsed = parseJsonText(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as Partial<EncodedSpanRecords> | null
  const resources = parsed?.resources
  const spans = parsed?.spans
  if (!Array.isArray(resources) || !Array.isArray(spans)) throw new MalformedSpanRecordsError('expected an object of resources and spans')
  for (const span of spans) {
    const resource = resources[span.resourceAttributes]
    if (typeof resource !== 'object' || resource === null) throw new MalformedSpanRecordsError(`span ${span.spanId} refers to no resource`)
    ;(span as unknown as SpanRecord).resourceAttributes = resource
  }
  return spans as unknown as SpanRecord[]
}
