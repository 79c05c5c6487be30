import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { secretTokenHash } from '@tracewell/auth'
import { createScoreConfig, createTraceShare, listComments, takeNextQueueItem, type SpanInsert } from '@tracewell/db'
import type { AttributeMap } from '@tracewell/span-schema'
import { startSmtpReceiver, type SmtpReceiver } from '@tracewell/test-support'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'
import { addPerson, csrf, signIn } from './people.helper.ts'

// Issue 47: comments, annotation queues, saved views and share links, through the routes, as the
// people of a team (and a person of another team) would use them.

const secret = 'session-secret-for-tests-0123456789abcdef'
const traceIds = Array.from({ length: 3 }, (_, index) => String(index + 1).repeat(32))
const t0 = 1_767_225_600n * 1_000_000_000n

function span(projectId: string, traceId: string, index: number): SpanInsert {
  const start = t0 + BigInt(index) * 1_000_000_000n
  return {
    projectId, traceId, spanId: String(index + 1).padStart(16, '0'), parentSpanId: null, name: `answer ${index}`, kind: 2,
    startTimeUnixNano: String(start), endTimeUnixNano: String(start + 1_000_000n), durationNs: '1000000',
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: 'scope', scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    attributes: {} as AttributeMap, resourceAttributes: {} as AttributeMap, events: [], links: [],
  }
}

interface Person {
  userId: string
  name: string
  /** Headers of a request from this person's signed-in console (cookie and CSRF header). */
  headers: Record<string, string>
}

describe('working on traces together', { timeout: 60_000 }, () => {
  let cp: TestControlPlane
  let ws: Workspace
  let otherTeam: Workspace
  let ada: Person
  let grace: Person
  let viewer: Person
  let outsider: Person

  const call = (person: Person | { headers: Record<string, string> }, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    cp.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}project_id=${ws.projectId}`, headers: person.headers, ...(payload === undefined ? {} : { payload: payload as object }) })

  /** A person of the team with `role`, signed in through the sign-in route. */
  async function personIn(teamId: string, role: 'viewer' | 'member' | 'admin' | 'owner', name: string): Promise<Person> {
    const person = await addPerson(cp.db, teamId, role, `${name}@acme.example`)
    return { userId: person.id, name: person.name, headers: { cookie: await signIn(cp.app, person.email), ...csrf } }
  }

  before(async () => {
    cp = await startControlPlane({ SESSION_SECRET: secret })
    ws = await seedWorkspace(cp.db, 'Acme')
    otherTeam = await seedWorkspace(cp.db, 'Other')
    ada = await personIn(ws.teamId, 'member', 'Ada')
    grace = await personIn(ws.teamId, 'member', 'Grace')
    viewer = await personIn(ws.teamId, 'viewer', 'Vera')
    outsider = await personIn(otherTeam.teamId, 'owner', 'Oscar')
    await storeSpans(cp.db, traceIds.map((traceId, index) => span(ws.projectId, traceId, index)))
    await summariseAll(cp.db)
  })
  after(() => cp.close())

  describe('comments', () => {
    it('comments on a trace, answers in its thread, resolves it, and counts comments in the trace list', async () => {
      const first = await call(ada, 'POST', '/api/comments', { objectType: 'trace', objectId: traceIds[0], body: 'Why is this **slow**?' })
      assert.equal(first.statusCode, 201, first.body)
      const comment = first.json()
      assert.deepEqual({ ...comment, id: 'id', createdAt: 'c', updatedAt: 'u' }, {
        id: 'id', objectType: 'trace', objectId: traceIds[0], threadId: null, author: { id: ada.userId, name: 'Ada' }, body: 'Why is this **slow**?', mentions: [],
        resolvedAt: null, resolvedBy: null, createdAt: 'c', updatedAt: 'u',
      })
      const reply = await call(grace, 'POST', '/api/comments', { objectType: 'trace', objectId: traceIds[0], threadId: comment.id, body: 'A retry.' })
      assert.equal(reply.statusCode, 201, reply.body)
      assert.equal(reply.json().threadId, comment.id)

      const resolved = await call(grace, 'PATCH', `/api/comments/${comment.id}`, { resolved: true })
      assert.equal(resolved.statusCode, 200, resolved.body)
      assert.deepEqual(resolved.json().resolvedBy, { id: grace.userId, name: 'Grace' })
      assert.equal((await call(grace, 'PATCH', `/api/comments/${reply.json().id}`, { resolved: true })).statusCode, 400, 'a reply is not resolved on its own')

      const listed = await call(viewer, 'GET', `/api/comments?objectType=trace&objectId=${traceIds[0]}`)
      assert.equal(listed.statusCode, 200)
      assert.deepEqual(listed.json().comments.map((c: { body: string }) => c.body), ['Why is this **slow**?', 'A retry.'])

      const list = await call(viewer, 'GET', '/api/traces')
      assert.equal(list.statusCode, 200, list.body)
      const counts = Object.fromEntries(list.json().traces.map((trace: { traceId: string; commentCount: number }) => [trace.traceId, trace.commentCount]))
      assert.deepEqual(counts, { [traceIds[0]!]: 2, [traceIds[1]!]: 0, [traceIds[2]!]: 0 })
    })

    it('lets only the author edit or delete a comment; a viewer and a project key may not comment', async () => {
      const made = (await call(ada, 'POST', '/api/comments', { objectType: 'trace', objectId: traceIds[1], body: 'mine' })).json()
      const byOther = await call(grace, 'PATCH', `/api/comments/${made.id}`, { body: 'hers now' })
      assert.deepEqual({ status: byOther.statusCode, body: byOther.json() }, { status: 403, body: { message: 'Only its author may edit a comment' } })
      assert.equal((await call(grace, 'DELETE', `/api/comments/${made.id}`)).statusCode, 403)
      assert.equal((await call(ada, 'PATCH', `/api/comments/${made.id}`, { body: 'mine, edited' })).json().body, 'mine, edited')
      assert.equal((await call(ada, 'DELETE', `/api/comments/${made.id}`)).statusCode, 204)
      assert.deepEqual(await listComments(cp.db, ws.projectId, 'trace', traceIds[1]!), [])

      const byViewer = await call(viewer, 'POST', '/api/comments', { objectType: 'trace', objectId: traceIds[1], body: 'hello' })
      assert.equal(byViewer.statusCode, 403)
      assert.match(byViewer.json().message, /comments:write/)
      const byKey = await cp.app.inject({ method: 'POST', url: '/api/comments', headers: { 'x-api-key': ws.projectKey }, payload: { objectType: 'trace', objectId: traceIds[1], body: 'hello' } })
      assert.equal(byKey.statusCode, 403)
    })

    it('notifies the members a comment mentions, and refuses a mention of someone outside the team', async () => {
      const mention = `@[Grace](user:${grace.userId}) can you look?`
      const made = await call(ada, 'POST', '/api/comments', { objectType: 'trace', objectId: traceIds[2], body: mention })
      assert.equal(made.statusCode, 201, made.body)
      assert.deepEqual(made.json().mentions, [grace.userId])
      const inbox = (await cp.app.inject({ url: '/api/notifications', headers: grace.headers })).json().notifications
      assert.equal(inbox.length, 1)
      assert.equal(inbox[0].comment.body, mention)
      assert.equal((await cp.app.inject({ url: '/api/notifications', headers: ada.headers })).json().notifications.length, 0, 'the author is not told of their own comment')

      const refused = await call(ada, 'POST', '/api/comments', { objectType: 'trace', objectId: traceIds[2], body: `@[Oscar](user:${outsider.userId}) hi` })
      assert.deepEqual({ status: refused.statusCode, body: refused.json() }, {
        status: 400,
        body: { message: `body/body: mentions user ${outsider.userId}, who is not a member of this project's team` },
      })
      assert.equal((await listComments(cp.db, ws.projectId, 'trace', traceIds[2]!)).length, 1, 'nothing stored')
    })

    it('answers 404 for a comment on a trace the project does not have, and for another team’s project', async () => {
      const missing = await call(ada, 'POST', '/api/comments', { objectType: 'trace', objectId: 'f'.repeat(32), body: 'hm' })
      assert.equal(missing.statusCode, 404)
      const elsewhere = await cp.app.inject({ method: 'POST', url: `/api/comments?project_id=${otherTeam.projectId}`, headers: ada.headers, payload: { objectType: 'trace', objectId: traceIds[0], body: 'hm' } })
      assert.equal(elsewhere.statusCode, 404)
    })
  })

  describe('annotation queues', () => {
    let scoreConfigId: string
    before(async () => {
      scoreConfigId = (await createScoreConfig(cp.db, { projectId: ws.projectId, name: 'correct', dataType: 'boolean' })).id
    })

    it('makes a queue of score configurations, refusing ones the project does not have and people outside the team', async () => {
      const badConfig = await call(ada, 'POST', '/api/annotation-queues', { name: 'q', scoreConfigIds: ['nope'] })
      assert.deepEqual({ status: badConfig.statusCode, body: badConfig.json() }, { status: 400, body: { message: 'body/scoreConfigIds/0: the project has no score configuration nope' } })
      const badAssignee = await call(ada, 'POST', '/api/annotation-queues', { name: 'q', scoreConfigIds: [scoreConfigId], assigneeIds: [outsider.userId] })
      assert.equal(badAssignee.statusCode, 400)
      const made = await call(ada, 'POST', '/api/annotation-queues', { name: 'Weekly review', scoreConfigIds: [scoreConfigId], assigneeIds: [grace.userId] })
      assert.equal(made.statusCode, 201, made.body)
      assert.deepEqual(made.json().progress, { total: 0, completed: 0, pending: 0 })
      assert.equal((await call(viewer, 'POST', '/api/annotation-queues', { name: 'x', scoreConfigIds: [] })).statusCode, 403)
    })

    it('adds items by id and by the trace list’s filter, each once', async () => {
      const queue = (await call(ada, 'POST', '/api/annotation-queues', { name: 'By filter', scoreConfigIds: [scoreConfigId] })).json()
      const byId = await call(ada, 'POST', `/api/annotation-queues/${queue.id}/items`, { objectType: 'trace', objectIds: [traceIds[0]] })
      assert.deepEqual(byId.json(), { added: 1, matched: 1 })
      const byFilter = await call(ada, 'POST', `/api/annotation-queues/${queue.id}/items`, { filter: { service: 'svc' } })
      assert.equal(byFilter.statusCode, 201, byFilter.body)
      assert.deepEqual(byFilter.json(), { added: 2, matched: 3 })
      assert.deepEqual((await call(viewer, 'GET', `/api/annotation-queues/${queue.id}`)).json().progress, { total: 3, completed: 0, pending: 3 })
    })

    it('never hands two people the same item: 100 rounds of next taken at once', async () => {
      const queue = (await call(ada, 'POST', '/api/annotation-queues', { name: 'Race', scoreConfigIds: [scoreConfigId] })).json()
      const sessions = Array.from({ length: 200 }, (_, index) => `session-${index}`)
      for (let at = 0; at < sessions.length; at += 100) await call(ada, 'POST', `/api/annotation-queues/${queue.id}/items`, { objectType: 'session', objectIds: sessions.slice(at, at + 100) })
      const handed = new Map<string, string>()
      for (let round = 0; round < 100; round++) {
        const [a, b] = await Promise.all([ada, grace].map((person) => call(person, 'POST', `/api/annotation-queues/${queue.id}/next`)))
        const items = [a!.json().item, b!.json().item]
        assert.notEqual(items[0].id, items[1].id, `round ${round}: both got ${items[0].id}`)
        for (const [index, item] of items.entries()) {
          assert.equal(handed.has(item.id), false, `round ${round}: ${item.id} handed again`)
          handed.set(item.id, String(index))
          const done = await call(index === 0 ? ada : grace, 'POST', `/api/annotation-queues/${queue.id}/items/${item.id}/complete`)
          assert.equal(done.statusCode, 200, done.body)
        }
      }
      const read = (await call(ada, 'GET', `/api/annotation-queues/${queue.id}`)).json()
      assert.deepEqual(read.progress, { total: 200, completed: 200, pending: 0 })
      assert.deepEqual(read.progressByPerson.map((p: { completed: number }) => p.completed), [100, 100])
      assert.deepEqual((await call(ada, 'POST', `/api/annotation-queues/${queue.id}/next`)).json(), { item: null })
    })

    it('gives a taker their held item again, sends a skipped item to the back, and frees an item whose hold ran out', async () => {
      const queue = (await call(ada, 'POST', '/api/annotation-queues', { name: 'Holds', scoreConfigIds: [scoreConfigId] })).json()
      await call(ada, 'POST', `/api/annotation-queues/${queue.id}/items`, { objectType: 'trace', objectIds: traceIds })
      const held = (await call(ada, 'POST', `/api/annotation-queues/${queue.id}/next`)).json().item
      assert.equal(held.objectId, traceIds[0])
      assert.equal((await call(ada, 'POST', `/api/annotation-queues/${queue.id}/next`)).json().item.id, held.id, 'the same item while held')
      const byOther = await call(grace, 'POST', `/api/annotation-queues/${queue.id}/items/${held.id}/complete`)
      assert.deepEqual({ status: byOther.statusCode, body: byOther.json() }, { status: 409, body: { message: 'Someone else holds this item' } })
      assert.equal((await call(grace, 'POST', `/api/annotation-queues/${queue.id}/items/${held.id}/skip`)).statusCode, 409)
      assert.equal((await call(ada, 'POST', `/api/annotation-queues/${queue.id}/items/${held.id}/skip`)).statusCode, 204)
      const order = []
      for (const person of [ada, grace, viewer]) {
        const response = await call(person, 'POST', `/api/annotation-queues/${queue.id}/next`)
        order.push(response.statusCode === 200 ? response.json().item.objectId : response.statusCode)
      }
      assert.deepEqual(order, [traceIds[1], traceIds[2], 403], 'the skipped item went to the back; a viewer takes nothing')

      const expiring = (await call(ada, 'POST', '/api/annotation-queues', { name: 'Expiry', scoreConfigIds: [] })).json()
      await call(ada, 'POST', `/api/annotation-queues/${expiring.id}/items`, { objectType: 'trace', objectIds: [traceIds[0]] })
      const brief = await takeNextQueueItem(cp.db, expiring.id, ada.userId, 60_000)
      assert.ok(brief)
      assert.deepEqual((await call(grace, 'POST', `/api/annotation-queues/${expiring.id}/next`)).json(), { item: null }, 'held by Ada')
      // A minute passes: the hold is moved into the past rather than slept through, so a loaded
      // machine cannot let it run out before Grace's first ask.
      await cp.db.updateTable('annotation_queue_items').set({ held_until: new Date(Date.now() - 1_000) }).where('id', '=', brief.id).execute()
      assert.equal((await call(grace, 'POST', `/api/annotation-queues/${expiring.id}/next`)).json().item.id, brief.id, 'free once the hold ran out')
    })
  })

  describe('saved views', () => {
    const state = { filters: { service: 'svc', status: 'error' }, columns: ['name', 'durationMs', 'scores'], sort: 'duration', order: 'desc' as const }

    it('keeps a private view to its owner, shows a shared one to the project, and one default per person', async () => {
      const mine = await call(ada, 'POST', '/api/views', { name: 'My errors', state })
      assert.equal(mine.statusCode, 201, mine.body)
      const shared = await call(ada, 'POST', '/api/views', { name: 'Team errors', shared: true, state })
      assert.equal(shared.statusCode, 201)
      assert.deepEqual((await call(grace, 'GET', '/api/views')).json().views.map((view: { name: string }) => view.name), ['Team errors'])
      assert.deepEqual((await call(ada, 'GET', '/api/views')).json().views.map((view: { name: string }) => view.name), ['My errors', 'Team errors'])
      assert.equal((await call(grace, 'PUT', `/api/views/${mine.json().id}/default`)).statusCode, 404, "another person's private view")
      assert.equal((await call(grace, 'PUT', `/api/views/${shared.json().id}/default`)).statusCode, 204)
      const graceViews = (await call(grace, 'GET', '/api/views')).json().views
      assert.deepEqual(graceViews.map((view: { isDefault: boolean; state: unknown }) => [view.isDefault, view.state]), [[true, state]])
      assert.equal((await call(grace, 'PUT', `/api/views/${shared.json().id}`, { name: 'Mine now', state })).statusCode, 403)
    })

    it('lets a viewer save a private view but not share one', async () => {
      assert.equal((await call(viewer, 'POST', '/api/views', { name: 'Vera’s', state })).statusCode, 201)
      const sharing = await call(viewer, 'POST', '/api/views', { name: 'For all', shared: true, state })
      assert.equal(sharing.statusCode, 403)
      assert.match(sharing.json().message, /views:share/)
    })
  })

  describe('share links', () => {
    it('opens one trace, read-only, without signing in, marked noindex, and nothing else', async () => {
      const made = await call(ada, 'POST', `/api/traces/${traceIds[0]}/share`, {})
      assert.equal(made.statusCode, 201, made.body)
      const { token, url } = made.json()
      assert.match(url, new RegExp(`/shared/${token}$`))
      const opened = await cp.app.inject({ url: `/api/shared/traces/${token}` })
      assert.equal(opened.statusCode, 200)
      assert.equal(opened.headers['x-robots-tag'], 'noindex, nofollow')
      assert.equal(opened.json().traceId, traceIds[0])
      assert.deepEqual(opened.json().spans.map((s: { name: string }) => s.name), ['answer 0'])

      for (const attempt of [
        { url: '/api/traces', headers: { 'x-api-key': token } },
        { url: `/api/traces/${traceIds[1]}?project_id=${ws.projectId}`, headers: { 'x-api-key': token } },
        { url: `/api/traces/${traceIds[1]}?project_id=${ws.projectId}`, headers: { cookie: `tw_sid=${token}` } },
        { url: `/api/projects`, headers: { authorization: `Bearer ${token}` } },
      ]) {
        assert.equal((await cp.app.inject(attempt)).statusCode, 401, `${attempt.url} with the token`)
      }
    })

    it('stops opening once revoked or expired', async () => {
      const made = (await call(ada, 'POST', `/api/traces/${traceIds[1]}/share`, {})).json()
      assert.equal((await call(ada, 'GET', `/api/traces/${traceIds[1]}/shares`)).json().shares.length, 1)
      assert.equal((await call(ada, 'DELETE', `/api/trace-shares/${made.id}`)).statusCode, 204)
      assert.equal((await cp.app.inject({ url: `/api/shared/traces/${made.token}` })).statusCode, 404)

      const expiredToken = 'e'.repeat(43)
      await createTraceShare(cp.db, { tokenHash: secretTokenHash(expiredToken), projectId: ws.projectId, traceId: traceIds[2]!, createdByUserId: ada.userId, createdByKeyId: null, expiresAt: new Date(Date.now() - 1_000) })
      assert.equal((await cp.app.inject({ url: `/api/shared/traces/${expiredToken}` })).statusCode, 404)
      assert.equal((await call(ada, 'POST', `/api/traces/${traceIds[2]}/share`, { expiresAt: '2020-01-01T00:00:00Z' })).statusCode, 400)
      assert.equal((await call(viewer, 'POST', `/api/traces/${traceIds[2]}/share`, {})).statusCode, 403, 'a viewer does not share')
    })
  })
})

describe('a mention by mail', { timeout: 60_000 }, () => {
  let cp: TestControlPlane
  let smtp: SmtpReceiver
  let ws: Workspace

  before(async () => {
    smtp = await startSmtpReceiver()
    cp = await startControlPlane({ SESSION_SECRET: secret, SMTP_URL: smtp.url, MAIL_FROM: 'tracewell@example.com', PUBLIC_URL: 'https://tracewell.example.com' })
    ws = await seedWorkspace(cp.db, 'Acme')
    await storeSpans(cp.db, [span(ws.projectId, traceIds[0]!, 0)])
  })
  after(async () => {
    await cp?.close()
    await smtp?.close()
  })

  it('mails the person mentioned (not the author) with the comment and a link to the trace', async () => {
    const ada = await addPerson(cp.db, ws.teamId, 'member', 'Ada@acme.example')
    const grace = await addPerson(cp.db, ws.teamId, 'member', 'Grace@acme.example')
    const headers = { cookie: await signIn(cp.app, ada.email), ...csrf }
    const made = await cp.app.inject({
      method: 'POST',
      url: `/api/comments?project_id=${ws.projectId}`,
      headers,
      payload: { objectType: 'trace', objectId: traceIds[0], body: `@[Grace](user:${grace.id}) @[Ada](user:${ada.id}) look at this` },
    })
    assert.equal(made.statusCode, 201, made.body)
    for (let waited = 0; smtp.mails.length === 0 && waited < 10_000; waited += 50) await sleep(50)
    await sleep(200)
    assert.deepEqual(smtp.mails.map((mail) => mail.to), [['Grace@acme.example']])
    // Quoted-printable: soft line breaks joined, '=' written as =3D.
    const mail = smtp.mails[0]!.data.replace(/=\r?\n/g, '').replaceAll('=3D', '=')
    assert.match(mail, /Subject: \[Tracewell\] Ada mentioned you/)
    assert.match(mail, /@Grace @Ada look at this/)
    assert.match(mail, new RegExp(`https://tracewell.example.com/traces/${traceIds[0]}\\?project_id=${ws.projectId}`))
  })
})
