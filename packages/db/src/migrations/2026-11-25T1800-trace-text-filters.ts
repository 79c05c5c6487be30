import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'
import { TextFilterWords } from './frozen/text-filter-2026-11-27/text-filter.ts'

// The word filter of each trace (repositories/text-filter.ts): what full-text search scans
// instead of every span's text. The writer adds a batch's words to its traces' filters with
// tracewell_text_filter_union, in the statement that upserts their summaries.
//
// Then the filters of traces stored before are computed from their spans, a bounded batch at a
// time, with the same union, so a writer storing spans meanwhile loses no word. In the order of
// the traces' starts: an updated row moves to where there is room, the end of a full table, so
// updating in time order keeps the rows in the time order the writer stores them in (which the
// janitor's deletion by stretches of time relies on to touch few pages).

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

/**
 * Computes every stored trace's word filter from its spans, with the frozen word filter
 * (frozen/README.md); repositories/word-filter-backfill.ts does the same with today's.
 */
async function backfillTraceTextFilters(db: AnyDb, { tracesPerBatch = 2_000 } = {}): Promise<void> {
  // Statistics first: those of a table just filled (the trace summaries' own backfill) may still
  // say it is empty, and then each batch below is planned as a sort of all the project's rows.
  await sql`analyze trace_summaries`.execute(db)
  const { rows: projects } = await sql<{ project_id: string }>`select distinct project_id from trace_summaries`.execute(db)
  for (const { project_id: projectId } of projects) {
    // The start as text: a JavaScript Date would drop its microseconds and make the cursor go back.
    let after: { start: string; trace_id: string } | undefined
    for (;;) {
      // Walks trace_summaries_time_idx (project_id, start_time desc, trace_id desc) backwards from
      // the cursor's instant; of the traces starting at that very instant, those up to its trace
      // id were in the batch before.
      const { rows: traces } = await sql<{ start: string; trace_id: string }>`
        select start_time::text as start, trace_id from trace_summaries
        where project_id = ${projectId} ${after
          ? sql`and start_time >= ${after.start}::timestamptz and (start_time > ${after.start}::timestamptz or trace_id > ${after.trace_id})`
          : sql``}
        order by start_time, trace_id limit ${tracesPerBatch}`.execute(db)
      const last = traces.at(-1)
      if (last === undefined) break
      await backfillFiltersOf(db, projectId, traces.map((trace) => trace.trace_id))
      after = last
    }
  }
}

/** Computes the word filters of the given traces of a project from their spans. */
async function backfillFiltersOf(db: AnyDb, projectId: string, traceIds: string[]): Promise<void> {
  // The attributes as JSON text, which the filter reads (as the writer reads the COPY's bytes).
  // Each trace looked up by the primary key, whatever the planner believes of the project's size
  // (the statistics of a table just loaded may say it has none, and then a join reads all of the
  // project's spans for every batch): OFFSET 0 keeps the lateral subquery from being made a join.
  const { rows: spans } = await sql<{ trace_id: string; attributes: string }>`
    select k.trace_id, s.attributes
    from unnest(${traceIds}::text[]) as k(trace_id),
      lateral (select attributes::text from spans where project_id = ${projectId} and trace_id = k.trace_id offset 0) as s`.execute(db)
  const words = new Map<string, TextFilterWords>()
  for (const span of spans) {
    let filter = words.get(span.trace_id)
    if (filter === undefined) words.set(span.trace_id, (filter = new TextFilterWords()))
    filter.addJson(Buffer.from(span.attributes))
  }
  const filters = JSON.stringify([...words].map(([traceId, filter]) => ({ trace_id: traceId, text_filter: filter.toHex() })))
  await sql`
    update trace_summaries s set text_filter = tracewell_text_filter_union(s.text_filter, ('x' || f.text_filter)::varbit)
    from jsonb_to_recordset(${filters}::jsonb) as f(trace_id text, text_filter text)
    where s.project_id = ${projectId} and s.trace_id = f.trace_id and f.text_filter is not null`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table trace_summaries drop column if exists text_filter`.execute(db)
  await sql`drop function if exists tracewell_text_filter_union(varbit, varbit)`.execute(db)
}
