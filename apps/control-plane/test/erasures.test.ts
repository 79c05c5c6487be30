import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from '@tracewell/db'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

describe('erasure requests', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
  })
  after(() => cp.close())

  const url = (projectId = ws.projectId) => `/api/projects/${projectId}/erasures`
  const asTeam = (method: 'GET' | 'POST', path: string, payload?: object, key = ws.teamKey) =>
    cp.app.inject({ method, url: path, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) })
  const zero = { spans: 0, traces: 0, sessions: 0, scores: 0, judgments: 0, datasetItems: 0 }

  it('accepts a user, a session or trace ids (202), and reads each back queued', async () => {
    const traceId = 'ABCDEF0123456789abcdef0123456789'
    const subjects = [{ userId: 'user-42' }, { sessionId: 'session-7' }, { traceIds: [traceId, traceId] }]
    for (const subject of subjects) {
      const created = await asTeam('POST', url(), subject)
      assert.equal(created.statusCode, 202, created.body)
      const { id, status } = created.json()
      assert.equal(status, 'queued')
      const read = await asTeam('GET', `${url()}/${id}`)
      assert.equal(read.statusCode, 200)
      const body = read.json()
      assert.deepEqual({ ...body, createdAt: undefined }, {
        id, status: 'queued', userId: 'userId' in subject ? 'user-42' : null, sessionId: 'sessionId' in subject ? 'session-7' : null,
        traceCount: 'traceIds' in subject ? 1 : 0, deleted: zero, requestedBy: body.requestedBy, createdAt: undefined, completedAt: null,
      })
      assert.match(body.requestedBy, /.+/)
    }
    // Trace ids are listed lower-case, once, for the writers to take.
    const { rows } = await sql<{ trace_id: string; erased: boolean }>`
      select t.trace_id, t.erased from erasure_traces t join erasure_requests r on r.id = t.erasure_id where r.project_id = ${ws.projectId}`.execute(cp.db)
    assert.deepEqual(rows, [{ trace_id: traceId.toLowerCase(), erased: false }])
    const list = await asTeam('GET', url())
    assert.equal(list.statusCode, 200)
    assert.deepEqual(list.json().erasures.map((erasure: { userId: string | null; sessionId: string | null }) => [erasure.userId, erasure.sessionId]), [
      [null, null], [null, 'session-7'], ['user-42', null],
    ])
  })

  it('refuses a body without exactly one subject, naming what is wrong', async () => {
    const cases: [object, string][] = [
      [{}, 'body: exactly one of userId, sessionId, traceIds is required, got none'],
      [{ userId: 'a', sessionId: 'b' }, 'body: exactly one of userId, sessionId, traceIds is required, got userId, sessionId'],
      [{ userId: '' }, 'body/userId: must NOT have fewer than 1 characters'],
      [{ traceIds: [] }, 'body/traceIds: must NOT have fewer than 1 items'],
      [{ traceIds: ['xyz'] }, 'body/traceIds/0: must match pattern "^[0-9a-fA-F]{32}$"'],
      [{ user: 'a' }, 'body: must NOT have additional properties'],
    ]
    for (const [payload, message] of cases) {
      const response = await asTeam('POST', url(), payload)
      assert.deepEqual([response.statusCode, response.json()], [400, { message }], JSON.stringify(payload))
    }
  })

  it('keeps teams apart and wants the team key', async () => {
    const created = (await asTeam('POST', url(), { userId: 'someone' })).json()
    assert.deepEqual((await asTeam('GET', `${url()}/${created.id}`, undefined, other.teamKey)).statusCode, 404)
    assert.deepEqual((await asTeam('GET', `${url(other.projectId)}/${created.id}`, undefined, other.teamKey)).json(), { message: 'Erasure not found' })
    assert.equal((await asTeam('POST', url(), { userId: 'x' }, other.teamKey)).statusCode, 404)
    const asProject = await asTeam('POST', url(), { userId: 'x' }, ws.projectKey)
    assert.deepEqual([asProject.statusCode, asProject.json()], [403, { message: 'Not allowed: this needs the permission erasures:manage (docs/permissions.md)' }])
  })
})
