import { sql, type Kysely } from 'kysely'
import type { AnyDb } from '../create-db.ts'
import { TextFilterWords } from '../repositories/text-filter.ts'

// The word filter of each trace (repositories/text-filter.ts): what full-text search scans
// instead of every span's text. The writer adds a batch's words to its traces' filters with
// tracewell_text_filter_union, in the statement that upserts their summaries.
//
// Then the filters of traces stored before are computed from their spans, TRACES_PER_BATCH at a
// time in key order, with the same union, so a writer storing spans meanwhile loses no word.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table trace_summaries add column text_filter varbit`.execute(db)
  // Two filters of one trace as one, of the larger's size: the smaller first repeated to that
  // size (a filter of m bits reads bit (position mod m), so its words stay where a filter of the
  // larger size reads them), then OR-ed. Sizes are powers of two.
  await sql`
    create function tracewell_text_filter_union(a varbit, b varbit) returns varbit
    language sql immutable parallel safe as $$
      select case
        when a is null then b
        when b is null then a
        when length(a) = length(b) then a | b
        when length(a) < length(b) then repeat(a::text, length(b) / length(a))::varbit | b
        else a | repeat(b::text, length(a) / length(b))::varbit
      end
    $$`.execute(db)
  await backfillTraceTextFilters(db)
}

const TRACES_PER_BATCH = 2_000

/** Computes every stored trace's word filter from its spans (also what bench:query loads them with). */
export async function backfillTraceTextFilters(db: AnyDb): Promise<void> {
  let after: { project_id: string; trace_id: string } | undefined
  for (;;) {
    const { rows: traces } = await sql<{ project_id: string; trace_id: string }>`
      select project_id, trace_id from trace_summaries
      ${after ? sql`where (project_id, trace_id) > (${after.project_id}, ${after.trace_id})` : sql``}
      order by project_id, trace_id limit ${TRACES_PER_BATCH}`.execute(db)
    const last = traces.at(-1)
    if (last === undefined) return
    const keys = JSON.stringify(traces)
    // The attributes as JSON text, which the filter reads (as the writer reads the COPY's bytes).
    const { rows: spans } = await sql<{ project_id: string; trace_id: string; attributes: string }>`
      select s.project_id, s.trace_id, s.attributes::text as attributes
      from jsonb_to_recordset(${keys}::jsonb) as k(project_id text, trace_id text)
      join spans s using (project_id, trace_id)`.execute(db)
    const words = new Map<string, { project_id: string; trace_id: string; words: TextFilterWords }>()
    for (const span of spans) {
      const key = `${span.project_id}\u0000${span.trace_id}`
      let trace = words.get(key)
      if (trace === undefined) words.set(key, (trace = { project_id: span.project_id, trace_id: span.trace_id, words: new TextFilterWords() }))
      trace.words.addJson(Buffer.from(span.attributes))
    }
    const filters = JSON.stringify([...words.values()].map((trace) => ({ project_id: trace.project_id, trace_id: trace.trace_id, text_filter: trace.words.toHex() })))
    await sql`
      update trace_summaries s set text_filter = tracewell_text_filter_union(s.text_filter, ('x' || f.text_filter)::varbit)
      from jsonb_to_recordset(${filters}::jsonb) as f(project_id text, trace_id text, text_filter text)
      where s.project_id = f.project_id and s.trace_id = f.trace_id and f.text_filter is not null`.execute(db)
    after = last
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table trace_summaries drop column if exists text_filter`.execute(db)
  await sql`drop function if exists tracewell_text_filter_union(varbit, varbit)`.execute(db)
}
