// The statement path of storing spans: a batch as one JSON text parameter unpacked by
// jsonb_to_recordset, ON CONFLICT DO NOTHING. Slower than the COPY (span-copy.encoder.ts), but
// idempotent: what a batch is stored with when a span of it is already stored (a redelivered
// job), when it holds a value only this path stores exactly, and on PGlite.
//
// Having ingest queue rows ready to store instead of request bodies was measured twice and
// rejected: inside BullMQ's job JSON the text was escaped again, and even as binary COPY rows in
// the payload (no escaping) encoding a span costs about as much as decoding it, which would add
// that much to ingest's CPU per span (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).

import { nanosToIsoMicros, postgresTypeOf, spanColumnList, sql, toStorableJson, type Executor, type SpanColumn, type SpanFields, type SpanRow } from '@tracewell/db'

/**
 * The spans of one project, produced when `spans()` is called: storeSpans asks for them once
 * (again only if the batch falls back to the statement path), so a caller can hand over request
 * bodies to be decoded, encoded and let go one at a time instead of all at once.
 */
export interface ProjectSpanSource {
  projectId: string
  spans(): readonly SpanFields[]
}


/**
 * The row object of one span, keys in column order (spanColumns). A field a record of an earlier
 * version lacks is null, or false for a boolean: jsonb_to_recordset reads a missing key as NULL,
 * which a NOT NULL column with a default would refuse.
 */
function toSpanRow(projectId: string, span: SpanFields): SpanRow {
  const row: Record<string, unknown> = { project_id: projectId }
  for (let i = 1; i < spanColumnList.length; i++) {
    const column = spanColumnList[i] as SpanColumn & { name: string }
    const value = span[column.field as keyof SpanFields]
    row[column.name] = column.kind === 'timestamp' ? nanosToIsoMicros(value as string) : (value ?? (column.kind === 'bool' ? false : null))
  }
  return row as SpanRow
}

/**
 * The rows of a batch as JSON text WITHOUT the surrounding brackets: comma-joined row objects, so
 * chunks of several batches join with ',' and one pair of brackets makes the array Postgres reads.
 * One JSON.stringify over the whole array: measured faster than a hand-written builder (which
 * still has to stringify every value) and identical to the previous insert parameter by construction,
 * except that U+0000 and lone surrogates, which Postgres cannot store, become U+FFFD (storable-text.ts).
 */
export function spanRowsJson(projectId: string, spans: readonly SpanFields[]): string {
  if (spans.length === 0) return ''
  return toStorableJson(JSON.stringify(spans.map((span) => toSpanRow(projectId, span)))).slice(1, -1)
}

const columnList = sql.raw(spanColumnList.map((column) => column.name).join(', '))
const recordsetShape = sql.raw(spanColumnList.map((column) => `${column.name} ${postgresTypeOf[column.kind]}`).join(', '))

/**
 * Stores rows made by spanRowsJson in one idempotent statement, which avoids the
 * 65,535-parameter limit of multi-row VALUES and works the same on Postgres and PGlite. Malformed
 * text fails with a data exception (22P02). Answers the keys of the rows it inserted
 * (spanKey), as only those may be added to the summaries.
 */
export async function insertSpanRows(db: Executor, rowsJson: readonly string[]): Promise<Set<string>> {
  const rows = rowsJson.filter((chunk) => chunk !== '').join(',')
  if (rows === '') return new Set()
  const result = await sql<{ project_id: string; trace_id: string; span_id: string }>`
    insert into spans (${columnList})
    select ${columnList} from jsonb_to_recordset(('[' || ${rows}::text || ']')::jsonb) as batch(${recordsetShape})
    on conflict (project_id, trace_id, span_id, start_time) do nothing
    returning project_id, trace_id, span_id`.execute(db)
  return new Set(result.rows.map((row) => spanKey(row.project_id, row.trace_id, row.span_id)))
}

export const spanKey = (projectId: string, traceId: string, spanId: string): string => `${projectId}\u0000${traceId}\u0000${spanId}`
