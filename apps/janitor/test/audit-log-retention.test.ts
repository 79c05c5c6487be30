import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { listAuditEntries, recordAuditEntry, type Db } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { buildApp } from '../src/index.ts'
import { dayMs, janitorConfig } from './helpers.ts'

const url = '/api/cron/cleanup-traces'

/** An entry of `teamId` made `daysAgo` days ago (written with that time: the table takes no updates). */
async function entryAged(db: Db, teamId: string, action: string, daysAgo: number): Promise<void> {
  await db.insertInto('audit_log').values({
    team_id: teamId, project_id: null, actor_kind: 'user', actor_id: 'u1', actor_label: 'ann@example.com', action, permission: 'settings:write',
    resource_type: 'settings', resource_id: null, method: 'PUT', route: '/api/projects/:projectId/retention', params: '{}', status: 200, ip: null,
    user_agent: null, before: null, after: null, created_at: new Date(Date.now() - daysAgo * dayMs),
  }).execute()
}

describe('audit log retention (AUDIT_LOG_RETENTION_DAYS)', () => {
  let testDb: TestDatabase
  let app: App
  before(async () => {
    testDb = await createTestDatabase()
    app = await buildApp(janitorConfig(testDb.url, { AUDIT_LOG_RETENTION_DAYS: '30' }), { db: testDb.db })
  })
  after(async () => {
    await app.close()
    await testDb.drop()
  })

  it('a cleanup run removes entries older than the retention and keeps the rest', async () => {
    await entryAged(testDb.db, 'team-a', 'expired', 31)
    await entryAged(testDb.db, 'team-a', 'kept', 29)
    await recordAuditEntry(testDb.db, {
      teamId: 'team-a', projectId: null, actor: { kind: 'team-key', id: 'k1', label: 'tw_team_x' }, action: 'fresh', permission: 'settings:write',
      resourceType: 'settings', resourceId: null, method: 'PUT', route: '/r', params: {}, status: 200, ip: null, userAgent: null,
    })
    const response = await app.inject({ method: 'POST', url })
    assert.equal(response.statusCode, 200)
    assert.equal(response.json().prunedAuditEntries, 1)
    const left = (await listAuditEntries(testDb.db, { teamId: 'team-a', limit: 10 })).entries.map((entry) => entry.action)
    assert.deepEqual(left, ['fresh', 'kept'])

    // Nothing left to remove: the answer is the ordinary one, without the field.
    const again = await app.inject({ method: 'POST', url })
    assert.equal(again.json().prunedAuditEntries, undefined)
  })

  it('defaults to 365 days', () => {
    assert.equal(janitorConfig(testDb.url).AUDIT_LOG_RETENTION_DAYS, 365)
    assert.throws(() => janitorConfig(testDb.url, { AUDIT_LOG_RETENTION_DAYS: '0' }), /AUDIT_LOG_RETENTION_DAYS/)
  })
})
