import { spansForExport, type Db, type SpanDto, type SpanExportCursor } from '@tracewell/db'
import type { ColumnSource, ParquetWriter } from 'hyparquet-writer'
import { toOtlpJson } from '../otlp-export.ts'

// A project's spans streamed out (GET /api/projects/:projectId/export): pages read by keyset over
// the spans' time index and written out one page at a time, each page only once the client has
// taken the one before (an async generator behind a Readable pulls on demand), so memory holds a
// page however many spans go out.

/** Spans a page reads: a few MB of JSON at most. */
export const EXPORT_PAGE_SPANS = 2_000

export interface ExportWindow {
  from: Date
  to: Date
  after: SpanExportCursor | null
  /** At most this many spans in the whole response. */
  limit: number
}

/** A span's cursor: its start in nanoseconds (as exported), trace id and span id, joined by '_'. */
export const cursorOf = (span: Pick<SpanDto, 'startTimeUnixNano' | 'traceId' | 'spanId'>): string => `${span.startTimeUnixNano}_${span.traceId}_${span.spanId}`

const CURSOR = /^(\d{1,22})_([0-9a-f]{32})_([0-9a-f]{16})$/

/** A cursor read back, or null when it is not one. */
export function parseCursor(text: string): SpanExportCursor | null {
  const match = CURSOR.exec(text)
  if (match === null) return null
  const nanos = BigInt(match[1]!)
  // Stored starts hold microseconds: a cursor of a stored span names a whole one.
  return { startUs: (nanos / 1000n).toString(), traceId: match[2]!, spanId: match[3]! }
}

async function* pages(db: Db, projectId: string, window: ExportWindow): AsyncGenerator<SpanDto[]> {
  let after = window.after
  let left = window.limit
  while (left > 0) {
    const page = await spansForExport(db, projectId, { from: window.from, to: window.to, after, limit: Math.min(EXPORT_PAGE_SPANS, left) })
    if (page.length === 0) return
    yield page
    left -= page.length
    const last = page.at(-1)!
    after = { startUs: (BigInt(last.startTimeUnixNano) / 1000n).toString(), traceId: last.traceId, spanId: last.spanId }
  }
}

/** OTLP/JSON lines: each line an ExportTraceServiceRequest of one span, so that any line is a cursor. */
export async function* jsonLines(db: Db, projectId: string, window: ExportWindow): AsyncGenerator<string> {
  for await (const page of pages(db, projectId, window)) {
    yield page.map((span) => `${JSON.stringify(toOtlpJson([span]))}\n`).join('')
  }
}

/** The Parquet columns of a page: the stored columns, the attribute maps as JSON. */
function columnsOf(page: readonly SpanDto[]): ColumnSource[] {
  // Statistics (min and max per row group) only where a reader prunes by them, times and counts:
  // the footer keeps every row group's, and those of text and JSON columns would grow it by kilobytes a group.
  const text = (name: string, value: (span: SpanDto) => string | null): ColumnSource => ({ name, type: 'STRING', nullable: true, statistics: false, data: page.map(value) })
  const int64 = (name: string, value: (span: SpanDto) => string | number | null): ColumnSource => ({
    name, type: 'INT64', nullable: true, data: page.map((span) => { const v = value(span); return v === null ? null : BigInt(v) }),
  })
  const int32 = (name: string, value: (span: SpanDto) => number): ColumnSource => ({ name, type: 'INT32', nullable: false, data: Int32Array.from(page, value) })
  const json = (name: string, value: (span: SpanDto) => unknown): ColumnSource => ({ name, type: 'JSON', nullable: false, statistics: false, offsetIndex: false, data: page.map(value) })
  return [
    text('trace_id', (span) => span.traceId),
    text('span_id', (span) => span.spanId),
    text('parent_span_id', (span) => span.parentSpanId),
    text('name', (span) => span.name),
    int32('kind', (span) => span.kind),
    int64('start_time_unix_nano', (span) => span.startTimeUnixNano),
    int64('end_time_unix_nano', (span) => span.endTimeUnixNano),
    int64('duration_ns', (span) => span.durationNs),
    int32('status_code', (span) => span.status.code),
    text('status_message', (span) => span.status.message),
    text('service_name', (span) => span.serviceName),
    text('scope_name', (span) => span.scopeName),
    text('llm_vendor', (span) => span.llmVendor),
    text('llm_model', (span) => span.llmModel),
    text('llm_request_type', (span) => span.llmRequestType),
    int64('input_tokens', (span) => span.inputTokens),
    int64('output_tokens', (span) => span.outputTokens),
    int64('total_tokens', (span) => span.totalTokens),
    // As text: the exact decimal the span was priced at.
    text('total_cost_usd', (span) => (span.totalCostUsd === null ? null : String(span.totalCostUsd))),
    text('session_id', (span) => span.sessionId),
    text('user_id', (span) => span.userId),
    json('attributes', (span) => span.attributes),
    json('resource_attributes', (span) => span.resourceAttributes),
    json('events', (span) => span.events),
    json('links', (span) => span.links),
  ]
}

/** Spans a Parquet row group holds: a few pages, so that the footer (a few KB a group) stays small for ten million spans. */
export const PARQUET_ROW_GROUP_SPANS = 5 * EXPORT_PAGE_SPANS

/**
 * A Parquet file (hyparquet-writer: no native code, and a writer that takes row groups one at a
 * time): a row group per PARQUET_ROW_GROUP_SPANS, its bytes handed on as soon as it is written.
 * When `limit` ends the file before the window does, its key-value metadata holds
 * `tracewell.next_cursor`.
 */
export async function* parquetChunks(db: Db, projectId: string, window: ExportWindow): AsyncGenerator<Uint8Array> {
  // Loaded by the first export, not with the control plane, which most never ask for (docs/benchmarks.md#at-rest).
  const { ByteWriter, ParquetWriter, schemaFromColumnData } = await import('hyparquet-writer')
  const writer = new ByteWriter(1 << 20)
  const take = (): Uint8Array => {
    const bytes = new Uint8Array(writer.buffer, 0, writer.index).slice()
    writer.index = 0
    return bytes
  }
  let parquet: ParquetWriter | undefined
  const writeGroup = async (group: readonly SpanDto[]) => {
    const columnData = columnsOf(group)
    parquet ??= new ParquetWriter({ writer, schema: schemaFromColumnData({ columnData }), createdBy: 'tracewell' })
    await parquet.write({ columnData, rowGroupSize: group.length })
  }
  let written = 0
  let last: SpanDto | undefined
  let group: SpanDto[] = []
  for await (const page of pages(db, projectId, window)) {
    group.push(...page)
    written += page.length
    last = page.at(-1)
    if (group.length < PARQUET_ROW_GROUP_SPANS) continue
    await writeGroup(group)
    group = []
    yield take()
  }
  if (group.length > 0) await writeGroup(group)
  // An empty window is a file of no rows, with the schema of the columns.
  parquet ??= new ParquetWriter({ writer, schema: schemaFromColumnData({ columnData: columnsOf([]) }), createdBy: 'tracewell' })
  if (written === window.limit && last !== undefined) parquet.kvMetadata = [{ key: 'tracewell.next_cursor', value: cursorOf(last) }]
  await parquet.finish()
  yield take()
}
