import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { AllInOneConfigSchema, ConfigError, loadConfig } from '@tracewell/config'
import { countSpans, latestCleanupRun, recordCleanupRun, sql, withAdvisoryLock, type Db } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { CLEANUP_LOCK_KEY, OPEN_ENDPOINT_WARNING } from '@tracewell/janitor'
import { buildAllInOneApp } from '../src/index.ts'

// Issue 46 §4: `npm start` (and the all-in-one image, the same program) applies retention by
// itself on RETENTION_SCHEDULE, one run at a time with every other process on the database, and
// the retention settings say when it ran and when it runs next.

const teamKey = 'team-key-0123456789abcdef0123456789abcdef'
const projectId = 'checkout'
const dayMs = 86_400_000

function config(database: TestDatabase, settings: Record<string, string>) {
  return loadConfig(AllInOneConfigSchema, {
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    INIT_TEAM_NAME: 'ops',
    INIT_TEAM_API_KEY: teamKey,
    INIT_PROJECT_NAME: 'checkout',
    INIT_PROJECT_ID: projectId,
    INIT_PROJECT_API_KEY: 'proj-key-0123456789abcdef0123456789abcdef',
    ...settings,
  })
}

/** `count` spans of the project that started `daysAgo` days ago. */
async function seedOldSpans(db: Db, count: number, daysAgo: number): Promise<void> {
  await sql`
    insert into spans (project_id, trace_id, span_id, name, kind, start_time, end_time, duration_ns, attributes, resource_attributes, events, links)
    select ${projectId}, md5('old' || i::text), lpad(to_hex(i), 16, '0'), 'old span', 1, ${new Date(Date.now() - daysAgo * dayMs)}::timestamptz,
      ${new Date(Date.now() - daysAgo * dayMs)}::timestamptz, 0, '{}'::jsonb, '{}'::jsonb, '[]'::jsonb, '[]'::jsonb
    from generate_series(1, ${count}::int) as i`.execute(db)
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; await sleep(50)) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
  }
}

describe('npm start runs the retention cleanup on its schedule', () => {
  let database: TestDatabase
  before(async () => {
    database = await createTestDatabase()
  })
  after(async () => database.drop())

  it('runs every tick, skips while another holder has the cleanup lock, and answers the last and next run', async () => {
    const { db } = database
    const { app } = await buildAllInOneApp(config(database, { RETENTION_SCHEDULE: '* * * * * *' }), { db })
    try {
      const put = await app.inject({ method: 'PUT', url: `/api/projects/${projectId}/retention`, headers: { 'x-api-key': teamKey }, payload: { enabled: true, retentionDays: 1 } })
      assert.equal(put.statusCode, 200)

      // Another process's run holds the lock for 2.5 s: every tick meanwhile finds it and does nothing.
      // (Taken between two of the schedule's runs, which take it every second.)
      const holdLock = () => withAdvisoryLock(db, CLEANUP_LOCK_KEY, async () => {
        const before = await latestCleanupRun(db)
        await seedOldSpans(db, 3, 3)
        await sleep(2_500)
        return { before, after: await latestCleanupRun(db), spans: await countSpans(db, projectId) }
      })
      let held = await holdLock()
      for (const deadline = Date.now() + 10_000; !held.acquired && Date.now() < deadline; await sleep(20)) held = await holdLock()
      assert.ok(held.acquired)
      assert.deepEqual(held.value.after, held.value.before, 'no run while the lock is held elsewhere')
      assert.equal(held.value.spans, 3)

      // Released: the next tick deletes them, and records its run.
      assert.equal(await eventually(() => countSpans(db, projectId), (count) => count === 0), 0)
      const run = await eventually(() => latestCleanupRun(db), (latest) => latest?.deletedSpans === 3)
      assert.deepEqual({ ...run, startedAt: 'x', finishedAt: 'x' }, { startedAt: 'x', finishedAt: 'x', trigger: 'schedule', outcome: 'complete', deletedSpans: 3, droppedPartitions: 0 })

      const read = await app.inject({ url: `/api/projects/${projectId}/retention`, headers: { 'x-api-key': teamKey } })
      const { cleanup } = read.json<{ cleanup: { endpoint: string; schedule: string; nextRunAt: string; lastRun: { trigger: string } } }>()
      assert.equal(cleanup.endpoint, 'open')
      assert.equal(cleanup.schedule, '* * * * * *')
      assert.equal(cleanup.lastRun.trigger, 'schedule')
      // Recorded after a run, for the tick after it: within two seconds of now either way.
      assert.ok(Math.abs(Date.parse(cleanup.nextRunAt) - Date.now()) < 2_000, cleanup.nextRunAt)

      const ready = await app.inject({ url: '/readyz' })
      const details = ready.json<{ details: { cleanup: Record<string, unknown> } }>().details.cleanup
      assert.deepEqual({ ...details, nextRunAt: typeof details.nextRunAt }, { endpoint: 'open', schedule: '* * * * * *', nextRunAt: 'string', warning: OPEN_ENDPOINT_WARNING })
    } finally {
      await app.close()
    }
  })

  it('at start, runs one missed while it was stopped; with RETENTION_SCHEDULE=off, runs none', async () => {
    const { db } = database
    await seedOldSpans(db, 4, 5)
    // Off: only a call of the endpoint runs it, and the settings say no schedule.
    const off = await buildAllInOneApp(config(database, { RETENTION_SCHEDULE: 'off', CRON_API_KEY: 'cron-secret-0123456789abcdef0123456789' }), { db })
    try {
      await off.app.ready()
      await sleep(1_500)
      assert.equal(await countSpans(db, projectId), 4)
      const read = await off.app.inject({ url: `/api/projects/${projectId}/retention`, headers: { 'x-api-key': teamKey } })
      assert.deepEqual({ ...read.json().cleanup, lastRun: null }, { endpoint: 'cron-api-key', schedule: null, nextRunAt: null, lastRun: null })
    } finally {
      await off.app.close()
    }

    // Daily at 03:00 UTC; the last run two days ago: the start runs one at once.
    await recordCleanupRun(db, { startedAt: new Date(Date.now() - 2 * dayMs), finishedAt: new Date(Date.now() - 2 * dayMs), trigger: 'schedule', outcome: 'complete', deletedSpans: 0, droppedPartitions: 0 })
    const daily = await buildAllInOneApp(config(database, { RETENTION_SCHEDULE: '0 3 * * *' }), { db })
    try {
      await daily.app.ready()
      assert.equal(await eventually(() => countSpans(db, projectId), (count) => count === 0), 0)
      type Cleanup = { schedule: string; nextRunAt: string; lastRun: { trigger: string; deletedSpans: number } }
      const readCleanup = async () => (await daily.app.inject({ url: `/api/projects/${projectId}/retention`, headers: { 'x-api-key': teamKey } })).json<{ cleanup: Cleanup }>().cleanup
      // The run is recorded, and the next announced, just after its last batch.
      const cleanup = await eventually(readCleanup, (read) => read.lastRun.deletedSpans === 4 && read.schedule !== null)
      assert.equal(cleanup.schedule, '0 3 * * *')
      assert.match(cleanup.nextRunAt, /T03:00:00\.000Z$/)
      assert.ok(Date.parse(cleanup.nextRunAt) > Date.now() && Date.parse(cleanup.nextRunAt) <= Date.now() + dayMs)
      assert.deepEqual([cleanup.lastRun.trigger, cleanup.lastRun.deletedSpans], ['schedule', 4])
    } finally {
      await daily.app.close()
    }
  })

  it('refuses a schedule that is not a cron expression, naming the setting', () => {
    assert.throws(() => loadConfig(AllInOneConfigSchema, { RETENTION_SCHEDULE: 'every day' }), (error: unknown) => {
      assert.ok(error instanceof ConfigError)
      assert.match(error.message, /^RETENTION_SCHEDULE is invalid .*: when npm start runs the retention cleanup: a cron expression in UTC/)
      return true
    })
  })
})
