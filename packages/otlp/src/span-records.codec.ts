import { isUtf8 } from 'node:buffer'
import { JsonTextBytes, parseJsonText } from '@tracewell/json-text'
import type { AttributeMap, SpanRecord, SpanRecordToStore } from './span-record.ts'
import { namesTraceLabels } from './trace-label-keys.ts'

// The queue's 'records' body (docs/architecture.md#decode-once): the span records ingest decoded,
// validated, limited, masked and derived, as JSON, so that the writer parses them instead of
// decoding the request again. Each span is an array of its values in the order recordOfRow reads:
// with every field named in every span the records outgrew the request they came from. A
// resource's attributes are written once and referred to by index: every span of a resource
// shares one object, which the writer's COPY encodes once (span-copy.encoder.ts, sharedJsonb).
//
// Layout 3 writes each span's attributes and events, most of its bytes, as their own JSON texts
// after the rest: the JSON of the resources and spans, a newline (which JSON.stringify never
// writes), then the texts one after another, each span giving the byte length of its own. The
// writer stores those bytes as they are (decodeSpanRecordsToStore), neither parsing them into
// objects nor writing them out again (npm run bench:records; docs/benchmarks.md). Attributes that
// name a key a trace's prompt or tags come from (trace-label-keys.ts) stay inside the JSON, where
// the writer reads them, so that it never searches a text for those keys.

/** The layout written (`v`). */
const layoutVersion = 3
/** The layout before: every value inside the JSON. Still read, for jobs queued before an upgrade. */
const layoutWithoutTexts = 2

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
/**
 * The fields written as texts of their own (layout 3): in a row, each is its text's length in
 * bytes, or null; attributes that name a trace label's key are the exception, written in the row.
 */
const textFields = [spanFields.indexOf('attributes'), spanFields.indexOf('events')] as const
const attributesField = textFields[0]

/**
 * The JSON written: each span's values in the order of spanFields, its resource's attributes as an
 * index into `resources`, its attributes and events (layout 3) as the byte lengths of their texts.
 */
interface PositionalSpanRecords {
  v: typeof layoutVersion | typeof layoutWithoutTexts
  resources: AttributeMap[]
  spans: unknown[][]
}

const NEWLINE = 0x0a
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

/** The spans as a 'records' body. */
export function encodeSpanRecords(spans: readonly SpanRecord[]): Buffer {
  const resources: AttributeMap[] = []
  const rows: unknown[][] = []
  let textBytes = 0
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
    for (const field of textFields) {
      const value = field < length ? row[field] : null
      if (value === null || (field === attributesField && namesTraceLabels(value as AttributeMap))) continue
      let bytes: number
      if (Array.isArray(value) && value.length === 0) {
        // Most spans have no events.
        textArea = roomFor(textArea, textBytes, 2)
        textArea[textBytes] = OPEN_BRACKET
        textArea[textBytes + 1] = CLOSE_BRACKET
        bytes = 2
      } else {
        const text = JSON.stringify(value)
        // Written as they come, which gives each text's length in bytes without measuring it apart.
        textArea = roomFor(textArea, textBytes, text.length * 3)
        bytes = textArea.write(text, textBytes)
      }
      textBytes += bytes
      row[field] = bytes
    }
    rows.push(row)
  }
  const body: PositionalSpanRecords = { v: layoutVersion, resources, spans: rows }
  const head = JSON.stringify(body)
  const headBytes = Buffer.byteLength(head)
  const encoded = Buffer.allocUnsafe(headBytes + 1 + textBytes)
  encoded.write(head)
  encoded[headBytes] = NEWLINE
  textArea.copy(encoded, headBytes + 1, 0, textBytes)
  // A large body's area is not kept: an idle ingest holds only the usual one.
  if (textArea.length > TEXT_AREA_BYTES) textArea = Buffer.allocUnsafeSlow(TEXT_AREA_BYTES)
  return encoded
}

/**
 * Where encodeSpanRecords writes the texts before it knows the JSON that goes before them: one
 * area for every call (a thread encodes one body at a time, and copies the texts out before it
 * returns), grown when a body needs more, so that a one-span request allocates nothing for it.
 */
const TEXT_AREA_BYTES = 64 * 1024
let textArea: Buffer = Buffer.allocUnsafeSlow(TEXT_AREA_BYTES)

/** `area`, or a larger one holding its first `used` bytes, with room for `more` bytes after them. */
function roomFor(area: Buffer, used: number, more: number): Buffer {
  if (used + more <= area.length) return area
  const grown = Buffer.allocUnsafeSlow(Math.max(used + more, area.length * 2))
  area.copy(grown, 0, 0, used)
  return grown
}

/** Thrown for bytes that are not a 'records' body: only a changed encoder or a foreign writer gets here. */
export class MalformedSpanRecordsError extends Error {
  override name = 'MalformedSpanRecordsError'
}

/** The span records of a 'records' body, each sharing its resource's attributes object. */
export function decodeSpanRecords(body: Uint8Array): SpanRecord[] {
  const records = decodeSpanRecordsToStore(body)
  for (const record of records) {
    if (record.attributes instanceof JsonTextBytes) record.attributes = record.attributes.value() as AttributeMap
    if (record.events instanceof JsonTextBytes) record.events = record.events.value() as SpanRecord['events']
  }
  return records as SpanRecord[]
}

/**
 * The span records of a 'records' body as the writer stores them: each span's attributes and
 * events are the bytes of their JSON text in `body` (layout 3; a body of layout 2 gives them parsed).
 */
export function decodeSpanRecordsToStore(body: Uint8Array): SpanRecordToStore[] {
  if (!isUtf8(body)) throw new MalformedSpanRecordsError('not valid UTF-8')
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  const newline = bytes.indexOf(NEWLINE)
  const headEnd = newline === -1 ? bytes.length : newline
  // parseJsonText, not JSON.parse: attribute keys may be written with escapes (@tracewell/json-text).
  const parsed = parseJsonText(bytes.toString('utf8', 0, headEnd)) as Partial<PositionalSpanRecords> | null
  if (typeof parsed !== 'object' || parsed === null || !Array.isArray(parsed.resources) || !Array.isArray(parsed.spans)) {
    throw new MalformedSpanRecordsError('expected an object of resources and spans')
  }
  if (parsed.v === layoutWithoutTexts && newline === -1) return positionalSpanRecords(parsed as PositionalSpanRecords, undefined)
  if (parsed.v !== layoutVersion || newline === -1) throw new MalformedSpanRecordsError(`records layout ${String(parsed.v)}, not ${layoutVersion}: written by another ingest`)
  return positionalSpanRecords(parsed as PositionalSpanRecords, { bytes, at: newline + 1 })
}

/** Where the next text of a layout 3 body starts. */
interface TextCursor {
  bytes: Buffer
  at: number
}

function positionalSpanRecords({ resources, spans }: PositionalSpanRecords, texts: TextCursor | undefined): SpanRecordToStore[] {
  const records = new Array<SpanRecordToStore>(spans.length)
  for (let at = 0; at < spans.length; at++) {
    const row = spans[at]
    if (!Array.isArray(row) || row.length <= resourceField || row.length > spanFields.length) {
      throw new MalformedSpanRecordsError(`span ${at} holds not ${resourceField + 1} to ${spanFields.length} values`)
    }
    const record = recordOfRow(row)
    record.resourceAttributes = resourceOf(resources, row[resourceField], record.spanId)
    if (texts !== undefined) {
      // Attributes naming a trace label's key are written in the row, parsed with it.
      const inRow = typeof record.attributes === 'object' && record.attributes !== null && !Array.isArray(record.attributes)
      if (!inRow) record.attributes = textOf(texts, record.attributes, record.spanId)
      record.events = textOf(texts, record.events, record.spanId)
    }
    records[at] = record as unknown as SpanRecordToStore
  }
  if (texts !== undefined && texts.at !== texts.bytes.length) throw new MalformedSpanRecordsError(`${texts.bytes.length - texts.at} bytes after the last span's texts`)
  return records
}

/** The next text of `length` bytes (a subarray of the body, not a copy), or null. */
function textOf(texts: TextCursor, length: unknown, spanId: unknown): JsonTextBytes | null {
  if (length === null) return null
  const { bytes, at } = texts
  const end = at + (length as number)
  if (!Number.isSafeInteger(length) || (length as number) < 2 || end > bytes.length) {
    throw new MalformedSpanRecordsError(`span ${String(spanId)} gives ${String(length)} as a text's length, past the body's end`)
  }
  texts.at = end
  // Most spans have no events: one shared text, not a view of the body each.
  if (length === 2 && bytes[at] === OPEN_BRACKET && bytes[at + 1] === CLOSE_BRACKET) return EMPTY_ARRAY_TEXT
  return new JsonTextBytes(bytes.subarray(at, end))
}

const EMPTY_ARRAY_TEXT = new JsonTextBytes(Buffer.from('[]'))

function resourceOf(resources: AttributeMap[], index: unknown, spanId: unknown): AttributeMap {
  const resource = typeof index === 'number' ? resources[index] : undefined
  if (typeof resource !== 'object' || resource === null) throw new MalformedSpanRecordsError(`span ${String(spanId)} refers to no resource`)
  return resource
}
