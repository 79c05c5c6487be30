import { sql } from 'kysely'
import { spanOriginFields, type StoredSpan } from '@tracewell/span-schema'
import type { Executor } from './executor.ts'
import { nanosToIsoMicros, spanColumnList, type SpanColumnKind } from './span-rows.ts'

// Reading stored spans. Storing them is the write path's (@tracewell/write-path).

export async function countSpans(db: Executor, projectId?: string): Promise<number> {
  let query = db.selectFrom('spans').select((eb) => eb.fn.countAll<string>().as('count'))
  if (projectId !== undefined) query = query.where('project_id', '=', projectId)
  const { count } = await query.executeTakeFirstOrThrow()
  return Number(count)
}

/** A stored span as the trace API returns it (@tracewell/span-schema's StoredSpan). */
export type SpanDto = StoredSpan

const toNumberOrNull = (value: string | null): number | null => (value === null ? null : Number(value))
/** Whole microseconds since the epoch as nanoseconds, in decimal (0 stays "0", not "0000"). */
const microsToNanos = (micros: string): string => (micros === '0' ? '0' : `${micros}000`)
const microsToIso = (micros: string): string => nanosToIsoMicros(microsToNanos(micros))

/** Span rows with their start and end in epoch microseconds, as rowToDto reads them. */
function spanRows(db: Executor) {
  return db
    .selectFrom('spans')
    .selectAll()
    // Dates in JavaScript hold milliseconds; the epoch in microseconds keeps the stored precision.
    .select([
      sql<string>`(extract(epoch from start_time) * 1000000)::bigint::text`.as('start_us'),
      sql<string>`(extract(epoch from end_time) * 1000000)::bigint::text`.as('end_us'),
    ])
}

/** A trace's rows, in start order. */
function traceRows(db: Executor, projectId: string, traceId: string) {
  return spanRows(db)
    .where('project_id', '=', projectId)
    .where('trace_id', '=', traceId)
    .orderBy('start_time')
    .orderBy('span_id')
    .execute()
}

type TraceRow = Awaited<ReturnType<typeof traceRows>>[number]

/** A stored row as the trace API returns it, without its four JSON columns. */
function spanFieldsOf(row: TraceRow): Omit<SpanDto, 'attributes' | 'resourceAttributes' | 'events' | 'links'> {
  const { attributes: _a, resourceAttributes: _r, events: _e, links: _l, ...fields } = spanDtoOf(row)
  return fields
}

/** Each kind's stored value as the DTO has it: int8 and numeric are read as decimal strings. */
const readStored: Partial<Record<SpanColumnKind, (value: unknown) => unknown>> = {
  int64: (value) => toNumberOrNull(value as string | null),
  numeric: (value) => toNumberOrNull(value as string | null),
}

const originColumns = spanColumnList.filter((column) => column.field in spanOriginFields)

/** The origin fields of a row (spanOriginFields), as spanColumns describes their columns. */
function originFieldsOf(row: TraceRow): SpanOriginDto {
  const fields: Record<string, unknown> = {}
  for (const column of originColumns) {
    const value = row[column.name as keyof TraceRow]
    fields[column.field] = readStored[column.kind]?.(value) ?? value
  }
  return fields as SpanOriginDto
}

type SpanOriginDto = Pick<SpanDto, keyof typeof spanOriginFields>

function spanDtoOf(row: TraceRow): SpanDto {
  return {
    traceId: row.trace_id,
    spanId: row.span_id,
    parentSpanId: row.parent_span_id,
    name: row.name,
    kind: row.kind,
    startTime: microsToIso(row.start_us),
    endTime: microsToIso(row.end_us),
    startTimeUnixNano: microsToNanos(row.start_us),
    endTimeUnixNano: microsToNanos(row.end_us),
    durationNs: row.duration_ns,
    traceState: row.trace_state,
    status: { code: row.status_code, message: row.status_message },
    ...originFieldsOf(row),
    attributes: row.attributes,
    resourceAttributes: row.resource_attributes,
    events: row.events,
    links: row.links,
    receivedAt: row.received_at.toISOString(),
  }
}

export async function findTraceSpans(db: Executor, projectId: string, traceId: string): Promise<SpanDto[]> {
  return (await traceRows(db, projectId, traceId)).map(spanDtoOf)
}

interface JsonColumnsAsText {
  attributes_json: string
  resource_attributes_json: string
  events_json: string
  links_json: string
}

const scalarColumns = sql.raw([...spanColumnList.filter((column) => column.kind !== 'jsonb' && column.kind !== 'sharedJsonb').map((column) => column.name), 'received_at'].join(', '))

/**
 * A trace's spans as the JSON text of the trace API's `spans` array, or null when there are none.
 * The JSON columns (most of a span's bytes) go out as Postgres writes them, never parsed into
 * objects and written again: a 1,000-span trace costs its query and one string.
 */
export async function findTraceSpansJson(db: Executor, projectId: string, traceId: string): Promise<string | null> {
  // Every column but the four JSON ones, which come as text: the driver would parse jsonb.
  const { rows } = await sql<Omit<TraceRow, 'attributes' | 'resource_attributes' | 'events' | 'links'> & JsonColumnsAsText>`
    select ${scalarColumns}, (extract(epoch from start_time) * 1000000)::bigint::text as start_us, (extract(epoch from end_time) * 1000000)::bigint::text as end_us,
      attributes::text as attributes_json, resource_attributes::text as resource_attributes_json, events::text as events_json, links::text as links_json
    from spans where project_id = ${projectId} and trace_id = ${traceId}
    order by start_time, span_id`.execute(db)
  if (rows.length === 0) return null
  const spans = rows.map((row) => {
    const fields = JSON.stringify(spanFieldsOf({ ...row, attributes: {}, resource_attributes: {}, events: [], links: [] }))
    return `${fields.slice(0, -1)},"attributes":${row.attributes_json},"resourceAttributes":${row.resource_attributes_json},"events":${row.events_json},"links":${row.links_json}}`
  })
  return `[${spans.join(',')}]`
}

/** Where an export resumes: after this span, in (start, trace, span) order. */
export interface SpanExportCursor {
  /** The span's start, microseconds since the epoch (decimal). */
  startUs: string
  traceId: string
  spanId: string
}

/**
 * One page of a project's spans that started in [from, to), after `after`, in (start, trace,
 * span) order: keyset pagination over the (project_id, start_time) index of every day partition,
 * so each page costs the same however deep the export is, and nothing is held between pages.
 */
export async function spansForExport(
  db: Executor, projectId: string, window: { from: Date; to: Date; after: SpanExportCursor | null; limit: number },
): Promise<SpanDto[]> {
  const { from, to, after, limit } = window
  // The cursor's start as a timestamp to the microsecond: a double (to_timestamp) would round it.
  const afterStart = after && sql`(timestamptz 'epoch' + ${after.startUs}::bigint * interval '1 microsecond')`
  const rows = await spanRows(db)
    .where('project_id', '=', projectId)
    .where('start_time', '>=', from)
    .where('start_time', '<', to)
    .$if(afterStart !== null, (query) =>
      query.where(sql<boolean>`(start_time, trace_id, span_id) > (${afterStart}, ${after!.traceId}, ${after!.spanId})`).where(sql<boolean>`start_time >= ${afterStart}`),
    )
    .orderBy('start_time')
    .orderBy('trace_id')
    .orderBy('span_id')
    .limit(limit)
    .execute()
  return rows.map(spanDtoOf)
}
