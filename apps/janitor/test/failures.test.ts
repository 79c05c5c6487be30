import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { countSpans, getRetentionPolicy, sql } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { buildApp } from '../src/index.ts'
import { dayMs, janitorConfig, project, seedSpans } from './helpers.ts'

describe('one project failing', () => {
  let testDb: TestDatabase
  before(async () => {
    testDb = await createTestDatabase()
  })
  after(async () => testDb.drop())

  it('does not stop the others, and the 500 body names it without leaking the error', async () => {
    const { db } = testDb
    const old = new Date(Date.now() - 10 * dayMs)
    const first = await project(db, 'first', { enabled: true, retentionDays: 2 })
    const broken = await project(db, 'broken', { enabled: true, retentionDays: 2 })
    const last = await project(db, 'last', { enabled: true, retentionDays: 2 })
    for (const id of [first, broken, last]) await seedSpans(db, id, 25, old)
    // A real failure inside Postgres: deleting any span of `broken` raises.
    await sql.raw(`create function refuse_broken_delete() returns trigger language plpgsql as $$
      begin
        if old.project_id = '${broken}' then raise exception 'secret detail: deletion refused for %', old.project_id; end if;
        return old;
      end $$`).execute(db)
    await sql`create trigger refuse_broken_delete before delete on spans for each row execute function refuse_broken_delete()`.execute(db)

    const app = await buildApp(janitorConfig(testDb.url, { CLEANUP_BATCH_SIZE: '10' }), { db })
    const response = await app.inject({ url: '/api/cron/cleanup-traces', headers: { 'x-request-id': 'req-broken-1' } })
    assert.equal(response.statusCode, 500)
    const body = response.json()
    assert.doesNotMatch(response.body, /secret detail|refused|delete from|\bctid\b|spans where/i)
    const cutoff = body.projects[0].cutoff
    const expected = [
      { projectId: first, retentionDays: 2, cutoff, deletedSpans: 25 },
      { projectId: broken, retentionDays: 2, cutoff, deletedSpans: 0, error: 'cleanup failed for this project' },
      { projectId: last, retentionDays: 2, cutoff, deletedSpans: 25 },
    ].sort((a, b) => (a.projectId < b.projectId ? -1 : 1))
    assert.deepEqual(body, {
      success: false,
      message: 'Deleted 50 spans; cleanup failed for 1 project (request req-broken-1)',
      projects: expected,
    })

    assert.equal(await countSpans(db, first), 0)
    assert.equal(await countSpans(db, last), 0)
    assert.equal(await countSpans(db, broken), 25)
    assert.equal((await getRetentionPolicy(db, first)).lastDeletedSpans, 25)
    assert.equal((await getRetentionPolicy(db, broken)).lastRunAt, null)

    const metrics = (await app.inject({ url: '/metrics' })).body
    assert.match(metrics, /tracewell_janitor_run_failures_total 1/)
    assert.match(metrics, /tracewell_janitor_runs_total\{outcome="failed"\} 1/)
    await app.close()
  })

  it('answers 500 in the same shape when the run cannot start at all', async () => {
    const { db } = testDb
    const app = await buildApp(janitorConfig(testDb.url), { db })
    await sql`alter table project_retention_policies rename to project_retention_policies_moved`.execute(db)
    try {
      const response = await app.inject({ url: '/api/cron/cleanup-traces', headers: { 'x-request-id': 'req-down-1' } })
      assert.equal(response.statusCode, 500)
      assert.deepEqual(response.json(), { success: false, message: 'Cleanup failed (request req-down-1)', projects: [] })
    } finally {
      await sql`alter table project_retention_policies_moved rename to project_retention_policies`.execute(db)
      await app.close()
    }
  })
})
