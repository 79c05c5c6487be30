import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { countSpans, createDayPartition, listDayPartitions, partitionName, sql, startOfUtcDay, type Db } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { buildApp } from '../src/index.ts'
import { dayMs, janitorConfig, project, seedSpans } from './helpers.ts'

// Issue 48 §3: a span committed a moment before a day's partition is dropped, for a project whose
// retention keeps it, must survive. The writer's transaction below is held open across the run,
// as a writer's insert of a late span into an old day would be when the drop comes.

const url = '/api/cron/cleanup-traces'

async function makeDay(db: Db, daysAgo: number): Promise<Date> {
  const day = startOfUtcDay(new Date(Date.now() - daysAgo * dayMs))
  await db.transaction().execute((trx) => createDayPartition(trx, 'spans', day))
  return day
}

/** A transaction on a connection of its own that has inserted one span and stays open until `commit()`. */
async function openWriterTransaction(db: Db, projectId: string, startTime: Date): Promise<{ commit(): Promise<void> }> {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let inserted!: () => void
  const ready = new Promise<void>((resolve) => (inserted = resolve))
  const done = db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection)
    await sql`
      insert into spans (project_id, trace_id, span_id, name, kind, start_time, end_time, duration_ns, attributes, resource_attributes, events, links)
      values (${projectId}, ${'f'.repeat(32)}, ${'e'.repeat(16)}, 'late span', 1, ${startTime}, ${startTime}, 0, '{}'::jsonb, '{}'::jsonb, '[]'::jsonb, '[]'::jsonb)`.execute(connection)
    inserted()
    await released
    await sql`commit`.execute(connection)
  })
  await ready
  return { commit: async () => (release(), await done) }
}

/** Until a statement waits for a lock on `spans` of this database (every test database, a clone of one template, has the same OIDs): the janitor's drop, behind the writer. */
async function untilWaitingForSpansLock(db: Db): Promise<void> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(20)) {
    const { rows: [row] } = await sql<{ waiting: number }>`
      select count(*)::int as waiting from pg_locks
      where database = (select oid from pg_database where datname = current_database()) and relation = 'spans'::regclass and not granted`.execute(db)
    if ((row?.waiting ?? 0) > 0) return
  }
  throw new Error('the janitor never waited for the lock on spans')
}

const spanPartitions = async (db: Db) => (await listDayPartitions(db, 'spans')).map((partition) => partition.name)

describe('a span committed just before its day is dropped', () => {
  let testDb: TestDatabase
  before(async () => {
    testDb = await createTestDatabase()
  })
  after(async () => testDb.drop())

  it('survives, with its day, when its writer commits while the drop waits; an expired day is still dropped', async () => {
    const { db } = testDb
    const monthly = await project(db, 'monthly', { enabled: true, retentionDays: 30 })
    const forever = await project(db, 'forever', null)
    // Oldest first: the day the late span goes to is looked at while the writer is still open.
    const late = await makeDay(db, 45)
    const expired = await makeDay(db, 40)
    await seedSpans(db, monthly, 12, new Date(late.getTime() + 3_600_000), 'late-m')
    await seedSpans(db, monthly, 7, new Date(expired.getTime() + 3_600_000), 'expired-m')

    const writer = await openWriterTransaction(db, forever, new Date(late.getTime() + 2 * 3_600_000))
    const app = await buildApp(janitorConfig(testDb.url, { CLEANUP_LOCK_TIMEOUT_MS: '30000' }), { db })
    try {
      const run = app.inject({ url })
      await untilWaitingForSpansLock(db)
      await writer.commit()
      const response = await run
      assert.equal(response.statusCode, 200)
      const body = response.json<{ deletedSpans: number; droppedPartitions?: number }>()
      // The expired day went whole; the late span's day was kept, monthly's spans of it deleted row by row.
      assert.equal(body.droppedPartitions, 1)
      assert.equal(body.deletedSpans, 12)
      const names = await spanPartitions(db)
      assert.ok(names.includes(partitionName('spans', late)), 'the late span’s day is kept')
      assert.ok(!names.includes(partitionName('spans', expired)), 'the expired day is dropped')
      assert.equal(await countSpans(db, forever), 1)
      assert.equal(await countSpans(db, monthly), 0)
    } finally {
      await app.close()
    }
  })

  it('when the writer stays open past the lock timeout, leaves the days for the next run, which drops only the expired one', async () => {
    const { db } = testDb
    await db.deleteFrom('project_retention_policies').execute()
    const weekly = await project(db, 'weekly', { enabled: true, retentionDays: 7 })
    const keeper = await project(db, 'keeper', null)
    const late = await makeDay(db, 70)
    const expired = await makeDay(db, 65)
    await seedSpans(db, weekly, 3, new Date(late.getTime() + 3_600_000), 'late-w')
    await seedSpans(db, weekly, 5, new Date(expired.getTime() + 3_600_000), 'expired-w')

    const writer = await openWriterTransaction(db, keeper, new Date(late.getTime() + 2 * 3_600_000))
    const app = await buildApp(janitorConfig(testDb.url, { CLEANUP_LOCK_TIMEOUT_MS: '200' }), { db })
    try {
      const first = await app.inject({ url })
      assert.equal(first.statusCode, 200)
      assert.equal(first.json<{ droppedPartitions?: number }>().droppedPartitions, undefined)
      await writer.commit()
      assert.equal(await countSpans(db, keeper), 1)

      const second = await app.inject({ url })
      assert.equal(second.json<{ droppedPartitions?: number }>().droppedPartitions, 1)
      const names = await spanPartitions(db)
      assert.ok(names.includes(partitionName('spans', late)) && !names.includes(partitionName('spans', expired)))
      assert.equal(await countSpans(db, keeper), 1)
      assert.equal(await countSpans(db, weekly), 0)
    } finally {
      await app.close()
    }
  })
})
