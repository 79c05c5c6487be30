import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { listAuditEntries, pruneAuditLog, recordAuditEntry, sql, type Db, type NewAuditEntry } from '../src/index.ts'
import { engines } from '../src/testing/index.ts'

const entry = (teamId: string, overrides: Partial<NewAuditEntry> = {}): NewAuditEntry => ({
  teamId,
  projectId: 'p1',
  actor: { kind: 'team-key', id: 'key-1', label: 'tw_team_abc' },
  action: 'setRetentionPolicy',
  permission: 'settings:write',
  resourceType: 'settings',
  resourceId: 'p1',
  method: 'PUT',
  route: '/api/projects/:projectId/retention',
  params: { projectId: 'p1' },
  status: 200,
  ip: '127.0.0.1',
  userAgent: 'test',
  before: { retentionDays: 30 },
  after: { retentionDays: 7 },
  ...overrides,
})

/** An entry written `daysAgo` days ago, as if recorded then. */
async function recordAged(db: Db, teamId: string, daysAgo: number): Promise<void> {
  await recordAuditEntry(db, entry(teamId, { action: `aged-${daysAgo}` }))
  // Backdating goes around the trigger's UPDATE refusal the only way a test can: an insert.
  await db.insertInto('audit_log').values({
    team_id: teamId, project_id: null, actor_kind: 'user', actor_id: 'u1', actor_label: 'a@example.com', action: `old-${daysAgo}`, permission: 'members:manage',
    resource_type: 'members', resource_id: null, method: 'PATCH', route: '/r', params: '{}', status: 200, ip: null, user_agent: null, before: null, after: null,
    created_at: new Date(Date.now() - daysAgo * 86_400_000),
  }).execute()
}

for (const engine of engines) {
  describe(`audit log on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('lists a team’s entries newest first, filtered, a page at a time', async () => {
      await recordAuditEntry(db, entry('team-list', { action: 'createModelPrice', resourceId: 'price-1' }))
      await recordAuditEntry(db, entry('team-list', { actor: { kind: 'user', id: 'user-9', label: 'ann@example.com' } }))
      await recordAuditEntry(db, entry('team-list', { action: 'deleteModelPrice', resourceId: 'price-1', projectId: 'p2' }))
      await recordAuditEntry(db, entry('team-other'))

      const first = await listAuditEntries(db, { teamId: 'team-list', limit: 2 })
      assert.deepEqual(first.entries.map((e) => e.action), ['deleteModelPrice', 'setRetentionPolicy'])
      assert.ok(first.next !== null)
      const second = await listAuditEntries(db, { teamId: 'team-list', limit: 2, before: first.next })
      assert.deepEqual(second.entries.map((e) => e.action), ['createModelPrice'])
      assert.equal(second.next, null)

      assert.deepEqual((await listAuditEntries(db, { teamId: 'team-list', limit: 10, actorId: 'user-9' })).entries.map((e) => e.actor), [
        { kind: 'user', id: 'user-9', label: 'ann@example.com', name: null },
      ])
      assert.equal((await listAuditEntries(db, { teamId: 'team-list', limit: 10, resourceId: 'price-1' })).entries.length, 2)
      assert.equal((await listAuditEntries(db, { teamId: 'team-list', limit: 10, projectId: 'p2' })).entries.length, 1)
      assert.equal((await listAuditEntries(db, { teamId: 'team-list', limit: 10, action: 'createModelPrice' })).entries.length, 1)
      assert.equal((await listAuditEntries(db, { teamId: 'team-list', limit: 10, from: new Date(Date.now() + 60_000) })).entries.length, 0)
      const [latest] = (await listAuditEntries(db, { teamId: 'team-other', limit: 1 })).entries
      assert.deepEqual({ before: latest?.before, after: latest?.after, params: latest?.params }, { before: { retentionDays: 30 }, after: { retentionDays: 7 }, params: { projectId: 'p1' } })
    })

    it('refuses to update, delete or truncate an entry', async () => {
      await recordAuditEntry(db, entry('team-locked'))
      await assert.rejects(sql`update audit_log set action = 'forged' where team_id = 'team-locked'`.execute(db), /append-only: UPDATE refused/)
      await assert.rejects(sql`delete from audit_log where team_id = 'team-locked'`.execute(db), /append-only: DELETE refused/)
      await assert.rejects(sql`truncate audit_log`.execute(db), /append-only: TRUNCATE refused/)
      assert.equal((await listAuditEntries(db, { teamId: 'team-locked', limit: 10 })).entries[0]?.action, 'setRetentionPolicy')
    })

    it('refuses a delete of a recent entry even with the prune’s own setting forged', async () => {
      await recordAuditEntry(db, entry('team-forged'))
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await sql`select set_config('tracewell.audit_log_prune_before', ${new Date(Date.now() + 86_400_000).toISOString()}, true)`.execute(trx)
          await sql`delete from audit_log where team_id = 'team-forged'`.execute(trx)
        }),
        /append-only: DELETE refused/,
      )
      assert.equal((await listAuditEntries(db, { teamId: 'team-forged', limit: 10 })).entries.length, 1)
    })

    it('prunes only entries older than the retention, through prune_audit_log', async () => {
      await recordAged(db, 'team-prune', 400)
      await recordAged(db, 'team-prune', 100)
      const removed = await pruneAuditLog(db, 365)
      assert.ok(removed >= 1)
      const left = (await listAuditEntries(db, { teamId: 'team-prune', limit: 10 })).entries.map((e) => e.action).sort()
      assert.deepEqual(left, ['aged-100', 'aged-400', 'old-100'])
      await assert.rejects(pruneAuditLog(db, 0), /keep_days must be at least 1/)
      // The prune's setting does not outlive it: a delete after it is refused again.
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await pruneAuditLog(trx, 365)
          await sql`delete from audit_log where team_id = 'team-prune'`.execute(trx)
        }),
        /append-only: DELETE refused/,
      )
    })
  })
}
