import { isUtf8 } from 'node:buffer'
import { parseJsonText } from '@tracewell/json-text'
import type { AttributeMap, SpanRecord } from './span-record.ts'

// The queue's 'records' body (docs/architecture.md#decode-once): the span records ingest decoded,
// validated, limited, masked and derived, as JSON, so that the writer parses them instead of
// decoding the request again. Each span is an array of its values in the order of spanFields:
// with every field named in every span the records outgrew the request they came from. A
// resource's attributes are written once and referred to by index: every span of a resource
// shares one object, which the writer's COPY encodes once (span-copy.encoder.ts, sharedJsonb).

/** The layout written (`v`); a body without `v` is rec49's, each span an object naming its fields, still read. */
const layoutVersion = 2

/**
 * A span's fields in the order its values are written: part of the queue contract, so append
 * only. A row shorter than the list (an older ingest, or trailing nulls left out) reads the
 * fields it lacks as null; a longer one was written by a newer ingest and is refused.
 */
const spanFields = [
  'traceId',
  'spanId',
  'parentSpanId',
  'name',
  'kind',
  'startTimeUnixNano',
  'endTimeUnixNano',
  'durationNs',
  'statusCode',
  'resourceAttributes',
  'attributes',
  'events',
  'links',
  'serviceName',
  'serviceVersion',
  'scopeName',
  'scopeVersion',
  'traceState',
  'statusMessage',
  'llmVendor',
  'llmModel',
  'llmResponseModel',
  'llmRequestType',
  'inputTokens',
  'outputTokens',
  'totalTokens',
  'cachedInputTokens',
  'cacheWriteInputTokens',
  'reasoningTokens',
  'tokensEstimated',
  'sessionId',
  'userId',
  'inputCostUsd',
  'outputCostUsd',
  'totalCostUsd',
  'costSource',
] as const satisfies ReadonlyArray<keyof SpanRecord>

// A SpanRecord field missing from spanFields would be lost on the queue: this fails to compile then.
type _EveryFieldListed = NoneOf<Exclude<keyof SpanRecord, (typeof spanFields)[number]>>
type NoneOf<Fields extends never> = Fields

const resourceField = spanFields.indexOf('resourceAttributes')

/** The JSON written: each span's values in the order of spanFields, its resource's attributes as an index into `resources`. */
interface PositionalSpanRecords {
  v: typeof layoutVersion
  resources: AttributeMap[]
  spans: unknown[][]
}

/** rec49's JSON (no `v`): each span an object naming its fields. */
interface NamedSpanRecords {
  resources: AttributeMap[]
  spans: Array<Omit<SpanRecord, 'resourceAttributes'> & { resourceAttributes: number }>
}

/** The spans as a 'records' body. */
export function encodeSpanRecords(spans: readonly SpanRecord[]): Buffer {
  const resources: AttributeMap[] = []
  const rows: unknown[][] = []
  let last: AttributeMap | undefined
  let index = -1
  for (const span of spans) {
    if (span.resourceAttributes !== last) {
      last = span.resourceAttributes
      index = resources.indexOf(last)
      if (index === -1) index = resources.push(last) - 1
    }
    // Trailing nulls (the LLM fields of a span that is no LLM call) are left out; an optional field
    // the span lacks is null, which is how it is stored.
    let length = spanFields.length
    while (length > 0 && (span[spanFields[length - 1] as keyof SpanRecord] ?? null) === null) length--
    const row = new Array<unknown>(length)
    for (let field = 0; field < length; field++) row[field] = field === resourceField ? index : (span[spanFields[field] as keyof SpanRecord] ?? null)
    rows.push(row)
  }
  const body: PositionalSpanRecords = { v: layoutVersion, resources, spans: rows }
  return Buffer.from(JSON.stringify(body))
}

/** Thrown for bytes that are not a 'records' body: only a changed encoder or a foreign writer gets here. */
export class MalformedSpanRecordsError extends Error {
  override name = 'MalformedSpanRecordsError'
}

/** The span records of a 'records' body, each sharing its resource's attributes object. */
export function decodeSpanRecords(body: Uint8Array): SpanRecord[] {
  if (!isUtf8(body)) throw new MalformedSpanRecordsError('not valid UTF-8')
  // parseJsonText, not JSON.parse: attribute keys may be written with escapes (@tracewell/json-text).
  const parsed = parseJsonText(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as Partial<PositionalSpanRecords> | Partial<NamedSpanRecords> | null
  if (typeof parsed !== 'object' || parsed === null || !Array.isArray(parsed.resources) || !Array.isArray(parsed.spans)) {
    throw new MalformedSpanRecordsError('expected an object of resources and spans')
  }
  if (!('v' in parsed)) return namedSpanRecords(parsed as NamedSpanRecords)
  if (parsed.v !== layoutVersion) throw new MalformedSpanRecordsError(`records layout ${String(parsed.v)}, not ${layoutVersion}: written by a newer ingest`)
  return positionalSpanRecords(parsed as PositionalSpanRecords)
}

function positionalSpanRecords({ resources, spans }: PositionalSpanRecords): SpanRecord[] {
  const records = new Array<SpanRecord>(spans.length)
  for (let at = 0; at < spans.length; at++) {
    const row = spans[at]
    if (!Array.isArray(row) || row.length <= resourceField || row.length > spanFields.length) {
      throw new MalformedSpanRecordsError(`span ${at} holds not ${resourceField + 1} to ${spanFields.length} values`)
    }
    const record: Record<string, unknown> = {}
    for (let field = 0; field < spanFields.length; field++) record[spanFields[field] as string] = field < row.length ? row[field] : null
    record.resourceAttributes = resourceOf(resources, row[resourceField], record.spanId)
    records[at] = record as unknown as SpanRecord
  }
  return records
}

function namedSpanRecords({ resources, spans }: NamedSpanRecords): SpanRecord[] {
  for (const span of spans) (span as unknown as SpanRecord).resourceAttributes = resourceOf(resources, span.resourceAttributes, span.spanId)
  return spans as unknown as SpanRecord[]
}

function resourceOf(resources: AttributeMap[], index: unknown, spanId: unknown): AttributeMap {
  const resource = typeof index === 'number' ? resources[index] : undefined
  if (typeof resource !== 'object' || resource === null) throw new MalformedSpanRecordsError(`span ${String(spanId)} refers to no resource`)
  return resource
}
