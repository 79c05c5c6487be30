import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { backfillTraceTextFilters, createProject, createTeam, sql, type Db } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { summaryMismatches } from '@tracewell/write-path'
import { buildSummaries, createDayPartitions, dayMs, expirySpans, insertGeneratedSpans, querySpans } from '../src/seed-llm-spans.ts'

// The benchmarks' seed builds the summaries the writer would have kept: equal to summary-check's
// recomputation from the spans, word filters equal to those the migration's backfill computes
// with the writer's tokenizer, and every trace's words in its block's filter. Each shape over its
// days, with traces across midnight.

async function projectsOf(db: Db): Promise<string[]> {
  const team = await createTeam(db, { name: 'seed' })
  return Promise.all(['A', 'B', 'C'].map(async (name) => (await createProject(db, { teamId: team.id, name })).id))
}

/** The summaries exact; full-text search's blocks too when the seed built the words. */
async function assertExact(db: Db, projects: string[], { words }: { words: boolean }): Promise<void> {
  for (const project of projects) {
    const { blocks, ...summaries } = await summaryMismatches(db, project)
    assert.deepEqual(summaries, { traces: 0, sessions: 0, rollups: 0 })
    if (words) assert.equal(blocks, 0, 'every trace\'s words are in its block')
  }
  const { rows: [counts] } = await sql<{ traces: number; sessions: number; rollups: number }>`
    select (select count(*)::int from trace_summaries) as traces, (select count(*)::int from session_summaries) as sessions,
      (select count(*)::int from usage_rollups) as rollups`.execute(db)
  assert.ok(counts && counts.traces > 0 && counts.sessions > 0 && counts.rollups > 0)
}

describe('benchmark seed', { timeout: 300_000 }, () => {
  let database: TestDatabase
  before(async () => {
    database = await createTestDatabase()
  })
  after(async () => {
    await database.drop()
  })

  it("bench:query's spans: summaries as summary-check recomputes them, word filters as the backfill computes them", async () => {
    const { db } = database
    const projects = await projectsOf(db)
    const total = 40_000
    const from = new Date(Date.UTC(2026, 10, 1, 0, 0, 0))
    await createDayPartitions(db, from, new Date(from.getTime() + 31 * dayMs))
    await insertGeneratedSpans(db, total, querySpans(projects, from, total))
    await buildSummaries(db, { textFilters: true })
    await assertExact(db, projects, { words: true })

    await sql`create table seeded_filters as select project_id, trace_id, text_filter from trace_summaries`.execute(db)
    await sql`update trace_summaries set text_filter = null`.execute(db)
    await backfillTraceTextFilters(db)
    const { rows: [compared] } = await sql<{ traces: number; differing: number }>`
      select count(*)::int as traces, (count(*) filter (where s.text_filter is distinct from t.text_filter))::int as differing
      from seeded_filters s join trace_summaries t using (project_id, trace_id)`.execute(db)
    assert.deepEqual(compared, { traces: total / 8, differing: 0 })
    await sql`drop table seeded_filters`.execute(db)
    await sql`truncate spans, trace_summaries, session_summaries, usage_rollups, trace_text_blocks`.execute(db)
  })

  it("bench:cleanup:days's spans: summaries as summary-check recomputes them", async () => {
    const { db } = database
    const projects = await projectsOf(db)
    const total = 31_000 // not a multiple of a day's traces, so that some cross midnight
    const from = new Date(Date.UTC(2026, 9, 1, 0, 0, 0))
    const to = new Date(from.getTime() + 6 * dayMs)
    await createDayPartitions(db, from, to)
    await insertGeneratedSpans(db, total, expirySpans(projects, from, to, total))
    await buildSummaries(db, { textFilters: false })
    await assertExact(db, projects, { words: false })
    const { rows: [across] } = await sql<{ n: number }>`
      select count(*)::int as n from trace_summaries where date_trunc('day', start_time, 'UTC') <> date_trunc('day', end_time, 'UTC')`.execute(db)
    assert.ok((across?.n ?? 0) > 0, 'a trace runs across midnight')
  })
})
