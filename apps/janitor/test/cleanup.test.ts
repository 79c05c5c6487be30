import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { backfillSessionSummaries, backfillTraceSummaries, backfillUsageRollups, countSpans, getRetentionPolicy, sql } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { buildApp, cutoffFor, OPEN_ENDPOINT_WARNING, runRetentionCleanup } from '../src/index.ts'
import { dayMs, janitorConfig, project, seedSpans } from './helpers.ts'

const quiet = { info() {}, warn() {}, error() {} }

describe('retention cleanup', () => {
  let testDb: TestDatabase
  before(async () => {
    testDb = await createTestDatabase()
  })
  after(async () => testDb.drop())

  it('deletes the old spans of enabled projects only, count by count, and records the run', async () => {
    const { db } = testDb
    const now = Date.now()
    const weekly = await project(db, 'weekly', { enabled: true, retentionDays: 7 })
    const monthly = await project(db, 'monthly', { enabled: true, retentionDays: 30 })
    const disabled = await project(db, 'disabled', { enabled: false, retentionDays: 1 })
    const noPolicy = await project(db, 'no-policy', null)
    await seedSpans(db, weekly, 30, new Date(now - 10 * dayMs), 'old')
    await seedSpans(db, weekly, 20, new Date(now - 1 * dayMs), 'new')
    await seedSpans(db, monthly, 5, new Date(now - 40 * dayMs), 'old')
    await seedSpans(db, monthly, 7, new Date(now - 10 * dayMs), 'new')
    await seedSpans(db, disabled, 11, new Date(now - 400 * dayMs))
    await seedSpans(db, noPolicy, 13, new Date(now - 4000 * dayMs))
    await backfillTraceSummaries(db, { wordsInBlocks: true }) // one trace a span: the rows the writer would have kept
    await backfillUsageRollups(db)
    await sql`update trace_summaries set session_id = trace_id`.execute(db) // a session a trace
    await backfillSessionSummaries(db)

    const app = await buildApp(janitorConfig(testDb.url, { CLEANUP_BATCH_SIZE: '4' }), { db })
    const startedAt = Date.now()
    const response = await app.inject({ method: 'GET', url: '/api/cron/cleanup-traces' })
    const finishedAt = Date.now()
    assert.equal(response.statusCode, 200)
    const body = response.json()

    // The cutoffs come from one instant taken during the call: now − retentionDays.
    const cutoffs = new Map<string, string>(body.projects.map((p: { projectId: string; cutoff: string }) => [p.projectId, p.cutoff]))
    const weeklyCutoff = Date.parse(cutoffs.get(weekly) ?? '')
    assert.ok(weeklyCutoff >= startedAt - 7 * dayMs && weeklyCutoff <= finishedAt - 7 * dayMs)
    assert.equal(Date.parse(cutoffs.get(monthly) ?? '') , weeklyCutoff - 23 * dayMs)

    const expectedProjects = [
      { projectId: weekly, retentionDays: 7, cutoff: cutoffs.get(weekly), deletedSpans: 30 },
      { projectId: monthly, retentionDays: 30, cutoff: cutoffs.get(monthly), deletedSpans: 5 },
    ].sort((a, b) => (a.projectId < b.projectId ? -1 : 1))
    assert.deepEqual(body, { success: true, message: 'Deleted 35 spans', deletedSpans: 35, projects: expectedProjects })

    assert.equal(await countSpans(db, weekly), 20)
    assert.equal(await countSpans(db, monthly), 7)
    assert.equal(await countSpans(db, disabled), 11)
    assert.equal(await countSpans(db, noPolicy), 13)
    const { rows: summaries } = await sql<{ project_id: string; traces: string }>`
      select project_id, count(*) as traces from trace_summaries group by project_id`.execute(db)
    assert.deepEqual(
      new Map(summaries.map((row) => [row.project_id, Number(row.traces)])),
      new Map([[weekly, 20], [monthly, 7], [disabled, 11], [noPolicy, 13]]),
      'the summaries of deleted traces go with their spans',
    )
    const { rows: rollups } = await sql<{ project_id: string; spans: string }>`
      select project_id, sum(spans) as spans from usage_rollups where dimension = 'all' group by project_id`.execute(db)
    assert.deepEqual(
      new Map(rollups.map((row) => [row.project_id, Number(row.spans)])),
      new Map([[weekly, 20], [monthly, 7], [disabled, 11], [noPolicy, 13]]),
      'the usage rollups of hours past retention go with their spans',
    )
    const { rows: sessions } = await sql<{ project_id: string; sessions: string }>`
      select project_id, count(*) as sessions from session_summaries group by project_id`.execute(db)
    assert.deepEqual(
      new Map(sessions.map((row) => [row.project_id, Number(row.sessions)])),
      new Map([[weekly, 20], [monthly, 7], [disabled, 11], [noPolicy, 13]]),
      'the summaries of sessions past retention go with their spans',
    )

    const weeklyPolicy = await getRetentionPolicy(db, weekly)
    assert.equal(weeklyPolicy.lastDeletedSpans, 30)
    assert.equal(Date.parse(weeklyPolicy.lastRunAt ?? '') , weeklyCutoff + 7 * dayMs)
    assert.equal((await getRetentionPolicy(db, monthly)).lastDeletedSpans, 5)
    assert.deepEqual(await getRetentionPolicy(db, disabled), { projectId: disabled, enabled: false, retentionDays: 1, lastRunAt: null, lastDeletedSpans: null })

    // Nothing left to do: a second call deletes nothing and records that it did.
    const again = await app.inject({ method: 'POST', url: '/api/cron/cleanup-traces' })
    assert.equal(again.statusCode, 200)
    assert.equal(again.json().message, 'Deleted 0 spans')
    assert.equal((await getRetentionPolicy(db, weekly)).lastDeletedSpans, 0)
    assert.equal(await countSpans(db, weekly), 20)
    await app.close()
  })

  it('keeps a span that started exactly at the cutoff, deletes one a microsecond earlier', async () => {
    const { db } = testDb
    const id = await project(db, 'boundary', { enabled: true, retentionDays: 3 })
    const now = new Date('2026-11-20T12:00:00.000Z')
    const cutoff = cutoffFor(now, 3)
    assert.equal(cutoff.toISOString(), '2026-11-17T12:00:00.000Z')
    // seedSpans starts its i-th span i µs after the given time (i from 1), or exactly at it with sameStart.
    await seedSpans(db, id, 1, new Date(cutoff.getTime() - 1), 'ms-before') // cutoff − 999 µs
    await seedSpans(db, id, 1, cutoff, 'at', true) // exactly the cutoff
    await seedSpans(db, id, 1, cutoff, 'after') // cutoff + 1 µs
    await sql`insert into spans (project_id, trace_id, span_id, name, kind, start_time, end_time, duration_ns, attributes, resource_attributes, events, links)
      values (${id}, ${'b'.repeat(32)}, ${'c'.repeat(16)}, 'edge', 1, ${cutoff}::timestamptz - interval '1 microsecond', ${cutoff}, 1000, '{}', '{}', '[]', '[]')`.execute(db)
    assert.equal(await countSpans(db, id), 4)

    const outcome = await runRetentionCleanup(db, { batchSize: 100, timeBudgetMs: 60_000, now, log: quiet })
    assert.ok(outcome.ran)
    const report = outcome.report.projects.find((p) => p.projectId === id)
    assert.deepEqual(report, { projectId: id, retentionDays: 3, cutoff: '2026-11-17T12:00:00.000Z', deletedSpans: 2 })
    const { rows } = await sql<{ start: string }>`select to_char(start_time at time zone 'UTC', 'HH24:MI:SS.US') as start from spans where project_id = ${id} order by start_time`.execute(db)
    assert.deepEqual(rows.map((row) => row.start), ['12:00:00.000000', '12:00:00.000001'])
    assert.equal((await getRetentionPolicy(db, id)).lastRunAt, now.toISOString())
  })

  it('serves health, readiness and metrics', async () => {
    const app = await buildApp(janitorConfig(testDb.url), { db: testDb.db })
    assert.deepEqual((await app.inject({ url: '/healthz' })).json(), { status: 'ok' })
    assert.deepEqual((await app.inject({ url: '/readyz' })).json(), {
      status: 'ok', checks: { postgres: 'ok' }, details: { cleanup: { endpoint: 'open', schedule: null, nextRunAt: null, warning: OPEN_ENDPOINT_WARNING } },
    })
    const id = await project(testDb.db, 'metered', { enabled: true, retentionDays: 1 })
    await seedSpans(testDb.db, id, 3, new Date(Date.now() - 5 * dayMs))
    const run = await app.inject({ url: '/api/cron/cleanup-traces' })
    assert.equal(run.statusCode, 200)
    const { deletedSpans } = run.json<{ deletedSpans: number }>()
    assert.ok(deletedSpans >= 3, 'this project’s 3 spans, and any left by earlier tests in this database')
    const metrics = (await app.inject({ url: '/metrics' })).body
    assert.match(metrics, new RegExp(`^tracewell_janitor_deleted_spans_total ${deletedSpans}$`, 'm'))
    assert.match(metrics, /tracewell_janitor_runs_total\{outcome="complete"\} 1/)
    assert.match(metrics, /tracewell_janitor_run_duration_seconds_count 1/)
    assert.match(metrics, /tracewell_janitor_run_failures_total 0/)
    await app.close()
  })
})
