import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { listPrompts } from '@tracewell/db'
import { seedWorkspace, startControlPlane, unauthorized, type TestControlPlane, type Workspace } from './helper.ts'

describe('promptset management', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace

  const request = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, key = ws.projectKey) =>
    cp.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) })
  const newPromptset = async (name = 'r') => (await request('POST', '/api/promptsets', { name })).json().id as string

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
  })
  after(() => cp.close())

  it('creates a promptset (201, no prompts) and lists the project’s promptsets only', async () => {
    const created = await request('POST', '/api/promptsets', { name: 'Onboarding' })
    assert.equal(created.statusCode, 201)
    const promptset = created.json()
    assert.deepEqual(Object.keys(promptset), ['id', 'name', 'description', 'projectId', 'createdAt', 'updatedAt'])
    assert.deepEqual([promptset.name, promptset.description, promptset.projectId], ['Onboarding', '', ws.projectId])
    await request('POST', '/api/promptsets', { name: 'Theirs', description: 'x' }, other.projectKey)
    const listed = await request('GET', '/api/promptsets')
    assert.equal(listed.statusCode, 200)
    assert.deepEqual(listed.json().promptsets.map((r: { id: string }) => r.id), [promptset.id])
  })

  it('takes a team key with project_id (400 without it), and answers 400 for a bad body', async () => {
    const teamKey = await request('POST', '/api/promptsets', { name: 'x' }, ws.teamKey)
    assert.deepEqual([teamKey.statusCode, teamKey.json()], [400, { message: 'querystring/project_id: required with a team key or a signed-in session' }])
    const list = await request('GET', `/api/promptsets?project_id=${ws.projectId}`, undefined, ws.teamKey)
    assert.equal(list.statusCode, 200)
    const bogus = await request('GET', '/api/promptsets', undefined, 'tw_team_bogus-key-0123456789abcdef0123')
    assert.deepEqual([bogus.statusCode, bogus.json()], [401, unauthorized])
    const noName = await request('POST', '/api/promptsets', {})
    assert.deepEqual([noName.statusCode, noName.json()], [400, { message: "body: must have required property 'name'" }])
  })

  it('creates versions with variables derived from the value when omitted, and defaults', async () => {
    const id = await newPromptset()
    const created = await request('POST', `/api/promptsets/${id}/prompts`, { value: 'Hi ${name}, {{ city }} {name} {x-y}', model: 'gpt-4o' })
    assert.equal(created.statusCode, 201)
    const prompt = created.json()
    assert.deepEqual({ ...prompt, id: 'x', createdAt: 'd', updatedAt: 'd' }, {
      id: 'x', value: 'Hi ${name}, {{ city }} {name} {x-y}', variables: ['name', 'city', 'x-y'], model: 'gpt-4o', modelSettings: {},
      version: 1, live: false, tags: [], spanId: null, note: '', promptsetId: id, createdAt: 'd', updatedAt: 'd', labels: [],
    })
    const explicit = await request('POST', `/api/promptsets/${id}/prompts`, {
      value: 'Hi ${name}', model: 'm', variables: ['name', 'extra'], tags: ['a'], note: 'n', spanId: 'abcdef0123456789', modelSettings: { top_p: 1 },
    })
    assert.deepEqual(
      [explicit.json().version, explicit.json().variables, explicit.json().tags, explicit.json().note, explicit.json().spanId, explicit.json().modelSettings],
      [2, ['name', 'extra'], ['a'], 'n', 'abcdef0123456789', { top_p: 1 }],
    )
    const promptset = await request('GET', `/api/promptsets/${id}`)
    assert.deepEqual(promptset.json().prompts.map((p: { version: number }) => p.version), [1, 2])
  })

  it('validates prompt bodies strictly (JSON types are not coerced)', async () => {
    const id = await newPromptset()
    const cases: [object, string][] = [
      [{ model: 'm' }, "body: must have required property 'value'"],
      [{ value: 'v' }, "body: must have required property 'model'"],
      [{ value: 'v', model: 'm', live: 'true' }, 'body/live: must be boolean'],
      [{ value: 'v', model: 'm', variables: ['ok', 'not ok'] }, 'body/variables/1: must match pattern "^[A-Za-z_][A-Za-z0-9_.-]*$"'],
      [{ value: 'v', model: 'm', variables: ['a', 'a'] }, 'body/variables: must NOT have duplicate items (items ## 1 and 0 are identical)'],
    ]
    for (const [payload, message] of cases) {
      const response = await request('POST', `/api/promptsets/${id}/prompts`, payload)
      assert.deepEqual([response.statusCode, response.json()], [400, { message }], JSON.stringify(payload))
    }
    assert.deepEqual(await listPrompts(cp.db, id), [])
  })

  it('answers 404 for an unknown promptset or another project’s', async () => {
    const theirs = (await request('POST', '/api/promptsets', { name: 't' }, other.projectKey)).json().id
    for (const id of [theirs, 'unknown']) {
      for (const response of [
        await request('GET', `/api/promptsets/${id}`),
        await request('POST', `/api/promptsets/${id}/prompts`, { value: 'v', model: 'm' }),
        await request('PUT', `/api/promptsets/${id}/live`, { version: 1 }),
      ]) {
        assert.deepEqual([response.statusCode, response.json()], [404, { message: 'Prompt registry not found' }])
      }
    }
    assert.deepEqual(await listPrompts(cp.db, theirs), [])
  })

  it('gives concurrent creates distinct consecutive versions', async () => {
    const id = await newPromptset('concurrent')
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) => request('POST', `/api/promptsets/${id}/prompts`, { value: `v${index}`, model: 'm', live: index % 3 === 0 })),
    )
    assert.ok(responses.every((response) => response.statusCode === 201))
    const versions = responses.map((response) => response.json().version as number).sort((a, b) => a - b)
    assert.deepEqual(versions, Array.from({ length: 20 }, (_, index) => index + 1))
    const stored = await listPrompts(cp.db, id)
    assert.deepEqual(stored.map((p) => p.version), versions)
    assert.equal(stored.filter((p) => p.live).length, 1)
  })

  it('makes a version live and unsets the previous one atomically, also under concurrent switches', async () => {
    const id = await newPromptset('live')
    for (let index = 0; index < 5; index++) await request('POST', `/api/promptsets/${id}/prompts`, { value: `v${index + 1}`, model: 'm', live: index === 0 })
    const switched = await request('PUT', `/api/promptsets/${id}/live`, { version: 3 })
    assert.equal(switched.statusCode, 200)
    assert.deepEqual([switched.json().live.version, switched.json().live.live, switched.json().live.value], [3, true, 'v3'])
    assert.deepEqual((await listPrompts(cp.db, id)).map((p) => p.live), [false, false, true, false, false])

    const racing = await Promise.all([1, 2, 3, 4, 5, 1, 2, 3, 4, 5].map((version) => request('PUT', `/api/promptsets/${id}/live`, { version })))
    assert.ok(racing.every((response) => response.statusCode === 200))
    assert.equal((await listPrompts(cp.db, id)).filter((p) => p.live).length, 1)

    const cleared = await request('PUT', `/api/promptsets/${id}/live`, { version: null })
    assert.deepEqual([cleared.statusCode, cleared.json()], [200, { live: null }])
    assert.ok((await listPrompts(cp.db, id)).every((p) => !p.live))
  })

  it('answers 404 for setting an unknown version live and 400 for a bad version, leaving the live one', async () => {
    const id = await newPromptset('bad live')
    await request('POST', `/api/promptsets/${id}/prompts`, { value: 'v1', model: 'm', live: true })
    const unknown = await request('PUT', `/api/promptsets/${id}/live`, { version: 9 })
    assert.deepEqual([unknown.statusCode, unknown.json()], [404, { message: 'Prompt version 9 not found' }])
    for (const payload of [{ version: 0 }, { version: '1' }, { version: 1.5 }, {}]) {
      const response = await request('PUT', `/api/promptsets/${id}/live`, payload)
      assert.equal(response.statusCode, 400, JSON.stringify(payload))
      assert.match(response.json().message, /^body/)
    }
    assert.deepEqual((await listPrompts(cp.db, id)).map((p) => p.live), [true])
  })
})
