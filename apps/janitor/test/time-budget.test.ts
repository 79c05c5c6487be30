import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { countSpans, getRetentionPolicy } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { buildApp } from '../src/index.ts'
import { dayMs, janitorConfig, project, removeSlowDeletes, seedSpans, slowDownDeletes } from './helpers.ts'

describe('time budget', () => {
  let testDb: TestDatabase
  before(async () => {
    testDb = await createTestDatabase()
  })
  after(async () => testDb.drop())

  it('stops early, reports what remains, and the next call finishes', async () => {
    const { db } = testDb
    const id = await project(db, 'backlog', { enabled: true, retentionDays: 1 })
    await seedSpans(db, id, 1_500, new Date(Date.now() - 5 * dayMs), 'old')
    await seedSpans(db, id, 40, new Date(Date.now() - 3_600_000), 'new')
    // One millisecond: the budget is spent after the first batch (every run deletes at least one).
    const app = await buildApp(janitorConfig(testDb.url, { CLEANUP_BATCH_SIZE: '1000', CLEANUP_TIME_BUDGET_MS: '1' }), { db })

    const first = await app.inject({ url: '/api/cron/cleanup-traces' })
    assert.equal(first.statusCode, 200)
    const firstBody = first.json()
    assert.deepEqual(firstBody, {
      success: true,
      message: 'Deleted 1000 spans; time budget reached, call again to continue',
      deletedSpans: 1000,
      complete: false,
      projects: [{ projectId: id, retentionDays: 1, cutoff: firstBody.projects[0].cutoff, deletedSpans: 1000, remaining: true }],
    })
    assert.equal(await countSpans(db, id), 540)
    assert.equal((await getRetentionPolicy(db, id)).lastDeletedSpans, 1000)

    const second = await app.inject({ url: '/api/cron/cleanup-traces' })
    assert.equal(second.statusCode, 200)
    const secondBody = second.json()
    assert.deepEqual(secondBody, {
      success: true,
      message: 'Deleted 500 spans',
      deletedSpans: 500,
      projects: [{ projectId: id, retentionDays: 1, cutoff: secondBody.projects[0].cutoff, deletedSpans: 500 }],
    })
    assert.equal(await countSpans(db, id), 40)
    assert.match((await app.inject({ url: '/metrics' })).body, /tracewell_janitor_runs_total\{outcome="incomplete"\} 1/)
    await app.close()
  })

  it('marks projects it did not reach as remaining, and serves them first next time', async () => {
    const { db } = testDb
    await db.deleteFrom('project_retention_policies').execute()
    const ids = [
      await project(db, 'a', { enabled: true, retentionDays: 1 }),
      await project(db, 'b', { enabled: true, retentionDays: 1 }),
    ].sort()
    const [firstId, secondId] = ids as [string, string]
    for (const id of ids) await seedSpans(db, id, 30, new Date(Date.now() - 5 * dayMs))
    const app = await buildApp(janitorConfig(testDb.url, { CLEANUP_BATCH_SIZE: '10', CLEANUP_TIME_BUDGET_MS: '1' }), { db })

    const first = (await app.inject({ url: '/api/cron/cleanup-traces' })).json()
    assert.equal(first.complete, false)
    assert.deepEqual(first.projects.map((p: object) => ({ ...p, cutoff: undefined })), [
      { projectId: firstId, retentionDays: 1, cutoff: undefined, deletedSpans: 10, remaining: true },
      { projectId: secondId, retentionDays: 1, cutoff: undefined, deletedSpans: 0, remaining: true },
    ])
    // The project never reached goes first now, so a big backlog cannot starve the others.
    const second = (await app.inject({ url: '/api/cron/cleanup-traces' })).json()
    assert.equal(second.projects[0].projectId, secondId)
    assert.equal(second.projects[0].deletedSpans, 10)
    await app.close()
  })

  it('stops between two batches when the app shuts down, keeping what it deleted', async () => {
    const { db } = testDb
    await db.deleteFrom('project_retention_policies').execute()
    const id = await project(db, 'shutdown', { enabled: true, retentionDays: 1 })
    await seedSpans(db, id, 100, new Date(Date.now() - 5 * dayMs))
    await slowDownDeletes(db, 0.05) // 10 batches of 10: at least half a second
    try {
      const app = await buildApp(janitorConfig(testDb.url, { CLEANUP_BATCH_SIZE: '10' }), { db })
      const running = app.inject({ url: '/api/cron/cleanup-traces' })
      await new Promise((resolve) => setTimeout(resolve, 120))
      const closing = app.close()
      const response = await running
      await closing
      assert.equal(response.statusCode, 200)
      const body = response.json()
      assert.equal(body.complete, false)
      assert.equal(body.projects[0].remaining, true)
      assert.ok(body.deletedSpans >= 10 && body.deletedSpans < 100, `deleted ${body.deletedSpans}`)
      assert.equal(await countSpans(db, id), 100 - body.deletedSpans)
    } finally {
      await removeSlowDeletes(db)
    }
  })
})
