import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTeam, createUser, type Db } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { buildApp } from '../src/index.ts'
import { dayMs, janitorConfig } from './helpers.ts'

// A cleanup run removes what people's sign-ins leave behind once it has been unusable for 30 days
// (sessions ended or expired, invitations accepted, revoked or expired, password resets used or
// expired), and keeps what is live or recent: the members page lists recent invitations.

const daysAgo = (days: number) => new Date(Date.now() - days * dayMs)
const inDays = (days: number) => new Date(Date.now() + days * dayMs)

describe('ended sessions and spent links', { timeout: 60_000 }, () => {
  let testDb: TestDatabase
  let db: Db
  let app: App
  let userId: string
  let teamId: string
  before(async () => {
    testDb = await createTestDatabase()
    db = testDb.db
    app = await buildApp(janitorConfig(testDb.url), { db })
    teamId = (await createTeam(db, { name: 'Acme' })).id
    const user = await createUser(db, { email: 'ann@acme.example', name: 'Ann', passwordHash: null, emailVerified: true })
    assert.ok(user)
    userId = user.id
  })
  after(async () => {
    await app.close()
    await testDb.drop()
  })

  const session = (token: string, values: { ended_at?: Date; expires_at: Date }) =>
    db.insertInto('user_sessions').values({ token_hash: token, user_id: userId, ...values }).execute()
  const invitation = (token: string, values: { expires_at: Date; accepted_at?: Date; revoked_at?: Date }) =>
    db.insertInto('invitations').values({ team_id: teamId, email: `${token}@acme.example`, role: 'member', project_roles: '[]', token_hash: token, ...values }).execute()
  const reset = (token: string, values: { expires_at: Date; used_at?: Date }) => db.insertInto('password_resets').values({ token_hash: token, user_id: userId, ...values }).execute()

  it('removes what stopped being usable over 30 days ago, and keeps the rest', async () => {
    await session('s-live', { expires_at: inDays(5) })
    await session('s-ended-recently', { ended_at: daysAgo(2), expires_at: inDays(5) })
    await session('s-ended-long-ago', { ended_at: daysAgo(31), expires_at: inDays(5) })
    await session('s-expired-long-ago', { expires_at: daysAgo(31) })
    await invitation('i-open', { expires_at: inDays(7) })
    await invitation('i-accepted-recently', { expires_at: inDays(7), accepted_at: daysAgo(1) })
    await invitation('i-accepted-long-ago', { expires_at: inDays(7), accepted_at: daysAgo(40) })
    await invitation('i-revoked-long-ago', { expires_at: inDays(7), revoked_at: daysAgo(31) })
    await invitation('i-expired-long-ago', { expires_at: daysAgo(31) })
    await reset('r-open', { expires_at: inDays(1) })
    await reset('r-used-long-ago', { expires_at: inDays(1), used_at: daysAgo(31) })
    await reset('r-expired-long-ago', { expires_at: daysAgo(31) })

    const response = await app.inject({ method: 'POST', url: '/api/cron/cleanup-traces' })
    assert.equal(response.statusCode, 200, response.body)

    const tokens = async (table: 'user_sessions' | 'invitations' | 'password_resets') =>
      (await db.selectFrom(table).select('token_hash').orderBy('token_hash').execute()).map((row) => row.token_hash)
    assert.deepEqual(await tokens('user_sessions'), ['s-ended-recently', 's-live'])
    assert.deepEqual(await tokens('invitations'), ['i-accepted-recently', 'i-open'])
    assert.deepEqual(await tokens('password_resets'), ['r-open'])
  })
})
