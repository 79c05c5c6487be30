import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import {
  backfillActiveDays, backfillSessionSummaries, backfillTraceRollups, backfillTraceSummaries, backfillUsageRollups, backfillUserDayFigures, countSpans, createDayPartition, DAY_PARTITIONED_TABLES, isoDay, listDayPartitions,
  partitionName, sql, startOfUtcDay, type Db,
} from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { buildApp } from '../src/index.ts'
import { dayMs, janitorConfig, project, seedSpans } from './helpers.ts'

// Retention by day partitions (docs/operations.md#partitions): a day whose every span has expired
// for every project is dropped whole; what younger days hold of projects with a shorter retention
// is still deleted in batches, and the summaries and scores of every deleted trace go too.

async function makeDay(db: Db, daysAgo: number): Promise<Date> {
  const day = startOfUtcDay(new Date(Date.now() - daysAgo * dayMs))
  await db.transaction().execute((trx) => createDayPartition(trx, 'spans', day))
  return day
}

const at = (day: Date, hours: number) => new Date(day.getTime() + hours * 3_600_000)

async function scoreTrace(db: Db, projectId: string, id: string, traceId: string): Promise<void> {
  await sql`insert into scores (project_id, id, trace_id, name, data_type, value, source) values (${projectId}, ${id}, ${traceId}, 'quality', 'numeric', 1, 'api')`.execute(db)
}

describe('retention by day partitions', () => {
  let testDb: TestDatabase
  before(async () => {
    testDb = await createTestDatabase()
  })
  after(async () => testDb.drop())

  it('drops the days every project is past, deletes the rest in batches, and says how many of each', async () => {
    const { db } = testDb
    const monthly = await project(db, 'monthly', { enabled: true, retentionDays: 30 })
    const weekly = await project(db, 'weekly', { enabled: true, retentionDays: 7 })
    const forever = await project(db, 'forever', null)
    const old = await makeDay(db, 45)
    const kept = await makeDay(db, 60)
    const recent = await makeDay(db, 20)
    // Day −45: both projects, both past their retention → dropped.
    await seedSpans(db, monthly, 40, at(old, 3), 'old-m')
    await seedSpans(db, weekly, 30, at(old, 5), 'old-w')
    // Day −60: a project without a policy keeps its spans, so the day stays, with weekly's deleted.
    await seedSpans(db, forever, 3, at(kept, 2), 'kept-f')
    await seedSpans(db, weekly, 12, at(kept, 4), 'kept-w')
    // Day −20: monthly keeps its spans, weekly's are past 7 days → deleted row by row.
    await seedSpans(db, monthly, 8, at(recent, 1), 'recent-m')
    await seedSpans(db, weekly, 25, at(recent, 2), 'recent-w')
    await backfillTraceSummaries(db, { wordsInBlocks: true }) // one trace a span, as the writer would have kept them
    const { rows: [oldTrace] } = await sql<{ trace_id: string }>`select trace_id from spans where project_id = ${monthly} and start_time < ${at(old, 24)} limit 1`.execute(db)
    assert.ok(oldTrace)
    await scoreTrace(db, monthly, 'on a dropped day', oldTrace.trace_id)

    const app = await buildApp(janitorConfig(testDb.url, { CLEANUP_BATCH_SIZE: '10' }), { db })
    const response = await app.inject({ url: '/api/cron/cleanup-traces' })
    await app.close()
    assert.equal(response.statusCode, 200)
    const body = response.json<{ deletedSpans: number; droppedPartitions?: number; projects: Array<{ projectId: string; deletedSpans: number }> }>()
    assert.equal(body.droppedPartitions, 1)
    // Row by row: weekly's 12 on day −60 and 25 on day −20; the 70 of day −45 went with its partition.
    assert.equal(body.deletedSpans, 37)
    assert.deepEqual(Object.fromEntries(body.projects.map((p) => [p.projectId, p.deletedSpans])), { [monthly]: 0, [weekly]: 37 })

    const names = (await listDayPartitions(db, 'spans')).map((partition) => partition.name)
    assert.ok(!names.includes(partitionName('spans', old)), 'day −45 is gone')
    assert.ok(names.includes(partitionName('spans', kept)) && names.includes(partitionName('spans', recent)))
    assert.deepEqual([await countSpans(db, monthly), await countSpans(db, weekly), await countSpans(db, forever)], [8, 0, 3])
    // The summaries and scores of every deleted trace are gone too, those of the dropped day included.
    const { rows: [left] } = await sql<{ monthly: number; weekly: number; forever: number; scores: number }>`
      select (select count(*)::int from trace_summaries where project_id = ${monthly}) as monthly,
        (select count(*)::int from trace_summaries where project_id = ${weekly}) as weekly,
        (select count(*)::int from trace_summaries where project_id = ${forever}) as forever,
        (select count(*)::int from scores) as scores`.execute(db)
    assert.deepEqual(left, { monthly: 8, weekly: 0, forever: 3, scores: 0 })

    // A second run finds nothing to drop or delete, and says so in the body it always had.
    const second = await buildApp(janitorConfig(testDb.url), { db })
    const again = await second.inject({ url: '/api/cron/cleanup-traces' })
    await second.close()
    assert.equal(again.json<{ droppedPartitions?: number }>().droppedPartitions, undefined)
    assert.equal(again.json<{ deletedSpans: number }>().deletedSpans, 0)
  })

  it('drops a day whose spans belong only to projects that no longer exist, and makes the days ahead', async () => {
    const { db } = testDb
    await db.deleteFrom('project_retention_policies').execute()
    const monthly = await project(db, 'monthly-2', { enabled: true, retentionDays: 30 })
    const orphaned = await makeDay(db, 90)
    await seedSpans(db, 'deleted-project', 5, at(orphaned, 1), 'orphan')
    await seedSpans(db, monthly, 5, at(orphaned, 2), 'orphan-m')
    const app = await buildApp(janitorConfig(testDb.url), { db })
    const body = (await app.inject({ url: '/api/cron/cleanup-traces' })).json<{ droppedPartitions?: number }>()
    await app.close()
    assert.equal(body.droppedPartitions, 1)
    assert.equal(await countSpans(db, 'deleted-project'), 0)
    const names = (await listDayPartitions(db, 'spans')).map((partition) => partition.name)
    for (let ahead = -1; ahead <= 3; ahead++) assert.ok(names.includes(partitionName('spans', new Date(Date.now() + ahead * dayMs))), `day ${ahead} exists`)
  })

  it('with CLEANUP_CUTOFF=day, keeps the day holding now − retention whole and drops the day before it, deleting no row', async () => {
    const { db } = testDb
    await db.deleteFrom('project_retention_policies').execute()
    const monthly = await project(db, 'monthly-3', { enabled: true, retentionDays: 30 })
    const edge = await makeDay(db, 30)
    const before = await makeDay(db, 31)
    // The first hour of the day holding now − 30 days is past an exact cutoff; it stays with "day".
    await seedSpans(db, monthly, 6, at(edge, 0), 'edge')
    await seedSpans(db, monthly, 9, at(before, 12), 'before')
    const app = await buildApp(janitorConfig(testDb.url, { CLEANUP_CUTOFF: 'day' }), { db })
    const body = (await app.inject({ url: '/api/cron/cleanup-traces' })).json<{ deletedSpans: number; droppedPartitions?: number; projects: Array<{ cutoff: string }> }>()
    await app.close()
    assert.equal(body.projects[0]?.cutoff, edge.toISOString())
    assert.equal(body.droppedPartitions, 1)
    assert.equal(body.deletedSpans, 0)
    assert.equal(await countSpans(db, monthly), 6)
  })

  it('drops the summaries of a day with its spans (rollups by hour, traces and sessions by the day they were summarised), and their scores, deleting no row', async () => {
    const { db } = testDb
    await db.deleteFrom('project_retention_policies').execute()
    const monthly = await project(db, 'monthly-4', { enabled: true, retentionDays: 30 })
    const day = startOfUtcDay(new Date(Date.now() - 40 * dayMs))
    for (const table of DAY_PARTITIONED_TABLES) await db.transaction().execute((trx) => createDayPartition(trx, table, day))
    await seedSpans(db, monthly, 20, at(day, 6), 'summarised')
    await sql`update spans set session_id = 'chat-' || (('x' || span_id)::bit(64)::bigint % 4) where project_id = ${monthly}`.execute(db)
    // As the summariser would have left them 40 days ago: summaries made that day, rollups of its hours.
    await backfillTraceSummaries(db, { wordsInBlocks: true })
    await backfillSessionSummaries(db)
    await backfillUsageRollups(db)
    // The rows of the whole trace, its session's among them (and so the session's own row, session_figures).
    await backfillTraceRollups(db)
    // The users' rows of the day (and so their rows of the week, user_week_figures).
    await backfillActiveDays(db)
    await backfillUserDayFigures(db)
    await sql`update trace_summaries set fold_day = ${isoDay(day)}::date where project_id = ${monthly}`.execute(db)
    await sql`update session_summaries set fold_day = ${isoDay(day)}::date where project_id = ${monthly}`.execute(db)
    const { rows: [trace] } = await sql<{ trace_id: string }>`select trace_id from trace_summaries where project_id = ${monthly} limit 1`.execute(db)
    await scoreTrace(db, monthly, 'a trace of the day', trace!.trace_id)
    await sql`insert into scores (project_id, id, session_id, name, data_type, value, source) values (${monthly}, 'a session of the day', 'chat-1', 'quality', 'numeric', 1, 'api')`.execute(db)
    const counts = () => sql<{ traces: number; sessions: number; figures: number; weeks: number; rollups: number; scores: number }>`
      select (select count(*)::int from trace_summaries where project_id = ${monthly}) as traces,
        (select count(*)::int from session_summaries where project_id = ${monthly}) as sessions,
        (select count(*)::int from session_figures where project_id = ${monthly}) as figures,
        (select count(*)::int from user_week_figures where project_id = ${monthly}) as weeks,
        (select count(*)::int from usage_rollups where project_id = ${monthly}) as rollups,
        (select count(*)::int from scores where project_id = ${monthly}) as scores`.execute(db)
    const { rows: [seeded] } = await counts()
    assert.deepEqual({ ...seeded, rollups: seeded!.rollups > 0 }, { traces: 20, sessions: 4, figures: 4, weeks: 1, rollups: true, scores: 2 })

    const app = await buildApp(janitorConfig(testDb.url, { CLEANUP_CUTOFF: 'day' }), { db })
    const body = (await app.inject({ url: '/api/cron/cleanup-traces' })).json<{ deletedSpans: number; droppedPartitions?: number }>()
    await app.close()
    assert.equal(body.droppedPartitions, DAY_PARTITIONED_TABLES.length)
    assert.equal(body.deletedSpans, 0)
    const names = new Set((await Promise.all(DAY_PARTITIONED_TABLES.map((table) => listDayPartitions(db, table)))).flat().map((partition) => partition.name))
    for (const table of DAY_PARTITIONED_TABLES) assert.ok(!names.has(partitionName(table, day)), `${table}'s day −40 is gone`)
    const { rows: [left] } = await counts()
    assert.deepEqual(left, { traces: 0, sessions: 0, figures: 0, weeks: 0, rollups: 0, scores: 0 })
  })
})
