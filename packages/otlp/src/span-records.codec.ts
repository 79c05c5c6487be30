import { isUtf8 } from 'node:buffer'
import { parseJsonText } from '@tracewell/json-text'
import type { AttributeMap, SpanRecord } from './span-record.ts'

// The queue's 'records' body (docs/architecture.md#decode-once): the span records ingest decoded,
// validated, limited, masked and derived, as JSON, so that the writer parses them instead of
// decoding the request again. Each span is an array of its values in the order recordOfRow reads:
// with every field named in every span the records outgrew the request they came from. A
// resource's attributes are written once and referred to by index: every span of a resource
// shares one object, which the writer's COPY encodes once (span-copy.encoder.ts, sharedJsonb).

/** The layout written (`v`); a body of another layout is refused (none other has shipped). */
const layoutVersion = 2

/**
 * A span's record from its values: this is what fixes each field's place in a row, and it is part
 * of the queue contract, so append only (a new field takes the next index). A row shorter than
 * this (an older ingest, or trailing nulls left out) reads the fields it lacks as null; a longer
 * one was written by a newer ingest and is refused. A literal, not a loop over field names: the
 * writer builds each record in one go, with one shape (a loop made the parse no cheaper than
 * naming every field in every span).
 */
function recordOfRow(row: unknown[]): { [Field in keyof SpanRecord]-?: unknown } {
  return {
    traceId: row[0] ?? null,
    spanId: row[1] ?? null,
    parentSpanId: row[2] ?? null,
    name: row[3] ?? null,
    kind: row[4] ?? null,
    startTimeUnixNano: row[5] ?? null,
    endTimeUnixNano: row[6] ?? null,
    durationNs: row[7] ?? null,
    statusCode: row[8] ?? null,
    resourceAttributes: row[9] ?? null,
    attributes: row[10] ?? null,
    events: row[11] ?? null,
    links: row[12] ?? null,
    serviceName: row[13] ?? null,
    serviceVersion: row[14] ?? null,
    scopeName: row[15] ?? null,
    scopeVersion: row[16] ?? null,
    traceState: row[17] ?? null,
    statusMessage: row[18] ?? null,
    tokensEstimated: row[19] ?? null,
    llmVendor: row[20] ?? null,
    llmModel: row[21] ?? null,
    llmResponseModel: row[22] ?? null,
    llmRequestType: row[23] ?? null,
    inputTokens: row[24] ?? null,
    outputTokens: row[25] ?? null,
    totalTokens: row[26] ?? null,
    cachedInputTokens: row[27] ?? null,
    cacheWriteInputTokens: row[28] ?? null,
    reasoningTokens: row[29] ?? null,
    sessionId: row[30] ?? null,
    userId: row[31] ?? null,
    inputCostUsd: row[32] ?? null,
    outputCostUsd: row[33] ?? null,
    totalCostUsd: row[34] ?? null,
    costSource: row[35] ?? null,
  }
}

/** Each field's name at its index in a row, read back from recordOfRow. */
const spanFields: Array<keyof SpanRecord> = []
for (const [name, at] of Object.entries(recordOfRow(Array.from({ length: 256 }, (_, at) => at)))) spanFields[at as number] = name as keyof SpanRecord
if (spanFields.length !== Object.keys(recordOfRow([])).length || spanFields.includes(undefined as never)) throw new Error('recordOfRow gives two fields one index')
const resourceField = spanFields.indexOf('resourceAttributes')

/** The JSON written: each span's values in the order of spanFields, its resource's attributes as an index into `resources`. */
interface PositionalSpanRecords {
  v: typeof layoutVersion
  resources: AttributeMap[]
  spans: unknown[][]
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
  const parsed = parseJsonText(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as Partial<PositionalSpanRecords> | null
  if (typeof parsed !== 'object' || parsed === null || !Array.isArray(parsed.resources) || !Array.isArray(parsed.spans)) {
    throw new MalformedSpanRecordsError('expected an object of resources and spans')
  }
  if (parsed.v !== layoutVersion) throw new MalformedSpanRecordsError(`records layout ${String(parsed.v)}, not ${layoutVersion}: written by another ingest`)
  return positionalSpanRecords(parsed as PositionalSpanRecords)
}

function positionalSpanRecords({ resources, spans }: PositionalSpanRecords): SpanRecord[] {
  const records = new Array<SpanRecord>(spans.length)
  for (let at = 0; at < spans.length; at++) {
    const row = spans[at]
    if (!Array.isArray(row) || row.length <= resourceField || row.length > spanFields.length) {
      throw new MalformedSpanRecordsError(`span ${at} holds not ${resourceField + 1} to ${spanFields.length} values`)
    }
    const record = recordOfRow(row)
    record.resourceAttributes = resourceOf(resources, row[resourceField], record.spanId)
    records[at] = record as unknown as SpanRecord
  }
  return records
}

function resourceOf(resources: AttributeMap[], index: unknown, spanId: unknown): AttributeMap {
  const resource = typeof index === 'number' ? resources[index] : undefined
  if (typeof resource !== 'object' || resource === null) throw new MalformedSpanRecordsError(`span ${String(spanId)} refers to no resource`)
  return resource
}
