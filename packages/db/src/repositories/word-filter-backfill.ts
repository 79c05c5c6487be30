import { sql } from 'kysely'
import { TextFilterWords } from '@tracewell/text-filter'
import { projectsInPartition } from './day-partitions.repository.ts'
import type { Db } from '../create-db.ts'
import { addWordsToTextBlocks, wordsByBlock, wordsOfStoredTraces } from './text-blocks.repository.ts'

// The word filters of traces and of ten-minute blocks computed from stored spans, with today's
// word filter: what bench and tests use after loading spans by SQL, where no writer made them.
// The migrations that added these filters keep frozen copies of the code they ran with
// (migrations/frozen/README.md).

/** Computes every stored trace's word filter from its spans: how bench and tests load filters for spans stored by SQL. */
export async function backfillTraceTextFilters(db: Db, { tracesPerBatch = 2_000 } = {}): Promise<void> {
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
async function backfillFiltersOf(db: Db, projectId: string, traceIds: string[]): Promise<void> {
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

/**
 * Adds the words of every stored trace to its block, from its spans; with `foldedSince` (a day,
 * YYYY-MM-DD), of the traces the summariser wrote on or after that day only.
 */
export async function backfillTextBlocks(db: Db, { tracesPerBatch = 2_000, foldedSince }: { tracesPerBatch?: number; foldedSince?: string } = {}): Promise<void> {
  for (const projectId of await projectsInPartition(db, 'trace_summaries')) {
    let after: { start_time: string; trace_id: string } | undefined
    for (;;) {
      const { rows: traces } = await sql<{ project_id: string; trace_id: string; start_time: string; end_time: string }>`
        select project_id, trace_id,
          to_char(start_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as start_time,
          to_char(end_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as end_time
        from trace_summaries
        where project_id = ${projectId} ${foldedSince === undefined ? sql`` : sql`and fold_day >= ${foldedSince}::date`} ${after
          ? sql`and start_time >= ${after.start_time}::timestamptz and (start_time > ${after.start_time}::timestamptz or trace_id > ${after.trace_id})`
          : sql``}
        order by start_time, trace_id limit ${tracesPerBatch}`.execute(db)
      const last = traces.at(-1)
      if (last === undefined) break
      // JIT off: the spans' lookup over every day partition is costed past jit_above_cost, and
      // compiling it took most of a batch's time (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
      await db.transaction().execute(async (trx) => {
        await sql`select set_config('jit', 'off', true)`.execute(trx)
        const words = await wordsOfStoredTraces(trx, traces)
        await addWordsToTextBlocks(trx, wordsByBlock(traces.map((trace) => ({
          projectId, startMs: Date.parse(trace.start_time), words: words.get(`${projectId}\u0000${trace.trace_id}`) as TextFilterWords,
        }))))
      })
      after = last
    }
  }
}
