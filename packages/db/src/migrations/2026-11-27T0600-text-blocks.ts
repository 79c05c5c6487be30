import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'
import { addWordsToTextBlocks, projectsInPartition, wordsByBlock, wordsOfStoredTraces } from './frozen/text-filter-2026-11-27/text-blocks.ts'
import type { TextFilterWords } from './frozen/text-filter-2026-11-27/text-filter.ts'

// The word filters of blocks of ten minutes (repositories/text-blocks.repository.ts): full-text
// search reads a project's blocks before its traces' filters, one row a block instead of one a
// trace. Partitioned by the day of the block, like the spans of the traces it describes, and
// dropped with them.
//
// The blocks are only right if every summary's words are in its block, so a summariser of an
// earlier version, which knows nothing of blocks, must not write summaries once they exist. In
// order, while the previous version runs:
//
// 1. The table, its partitions (one short transaction).
// 2. The blocks of every stored trace, from its spans, 2,000 traces at a time, each batch its
//    own statements, with the summariser's own functions (the blocks must be exactly what it
//    makes; frozen as they were, frozen/README.md). The previous version's summariser goes on folding meanwhile: the trace list stays
//    fresh through what can be a long backfill.
// 3. The fence: trace_summaries gains `words_in_blocks`, not null and without a default
//    (existing rows read true), which that summariser does not set. From then on its folds fail
//    and are retried, their deltas kept, until a summariser of this version folds them (a writer
//    of the previous version may go on storing spans: its deltas carry no words, and the fold
//    reads them from the spans).
// 4. The traces that summariser wrote during step 2 (or before it was fenced) are all in
//    partitions of a fold_day on or after the migration's first day, since it writes every row it
//    makes or changes into today's: their blocks are made again, now that nothing else writes.
//
// A run stopped halfway starts again from the first trace: adding a word a block holds changes
// nothing, its count included.

export const transactional = false

const dayMs = 86_400_000

export async function up(db: Kysely<unknown>): Promise<void> {
  const anyDb = db as AnyDb
  const { rows: [clock] } = await sql<{ today: string }>`select to_char(now() at time zone 'UTC', 'YYYY-MM-DD') as today`.execute(db)
  const firstDay = clock!.today
  await db.transaction().execute(async (trx) => {
    await sql`
      create table if not exists trace_text_blocks (
        project_id text not null,
        block timestamptz not null,
        words integer not null,
        filter varbit not null,
        primary key (project_id, block)
      ) partition by range (block)`.execute(trx)
    // Kept in the row, compressed when it can be: a search reads every block's filter, and a filter
    // moved out of line (over ~2 KB) would cost a TOAST lookup a block.
    await sql`alter table trace_text_blocks alter column filter set storage main`.execute(trx)
    await sql`create table if not exists trace_text_blocks_default partition of trace_text_blocks default`.execute(trx)
    const { rows: stored } = await sql<{ day: string }>`
      select distinct to_char(start_time at time zone 'UTC', 'YYYY-MM-DD') as day from trace_summaries`.execute(trx)
    const days = new Set(stored.map((row) => row.day))
    for (let offset = -1; offset <= 3; offset++) days.add(new Date(Date.parse(`${firstDay}T00:00:00Z`) + offset * dayMs).toISOString().slice(0, 10))
    for (const day of days) {
      const next = new Date(Date.parse(`${day}T00:00:00Z`) + dayMs).toISOString().slice(0, 10)
      await sql`
        create table if not exists ${sql.id(`trace_text_blocks_p${day.replaceAll('-', '')}`)} partition of trace_text_blocks
        for values from (${sql.lit(`${day}T00:00:00.000Z`)}) to (${sql.lit(`${next}T00:00:00.000Z`)})`.execute(trx)
    }
  })
  await backfillTextBlocks(anyDb)
  await sql`alter table trace_summaries add column if not exists words_in_blocks boolean not null default true`.execute(db)
  await sql`alter table trace_summaries alter column words_in_blocks drop default`.execute(db)
  await backfillTextBlocks(anyDb, { foldedSince: firstDay })
}

/**
 * Adds the words of every stored trace to its block, from its spans; with `foldedSince` (a day,
 * YYYY-MM-DD), of the traces the summariser wrote on or after that day only. With the frozen
 * functions (frozen/README.md); repositories/word-filter-backfill.ts does the same with today's.
 */
async function backfillTextBlocks(db: AnyDb, { tracesPerBatch = 2_000, foldedSince }: { tracesPerBatch?: number; foldedSince?: string } = {}): Promise<void> {
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
      // compiling it took 250 ms of a batch that runs in a few hundred.
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

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists trace_text_blocks`.execute(db)
  await sql`alter table trace_summaries drop column if exists words_in_blocks`.execute(db)
}
