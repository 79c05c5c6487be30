import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { ControlPlaneConfigSchema, loadConfig } from '@tracewell/config'
import { buildApp } from '../src/index.ts'
import { seedWorkspace, startControlPlane, unauthorized, type TestControlPlane, type Workspace } from './helper.ts'

describe('GET /api/promptset', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  let promptsetId: string
  let emptyPromptsetId: string
  let otherPromptsetId: string

  const asProject = (key: string) => ({ 'x-api-key': key })
  const get = (query: string, key = ws.projectKey) => cp.app.inject({ url: `/api/promptset?${query}`, headers: asProject(key) })
  const post = (url: string, payload: object, key = ws.projectKey) => cp.app.inject({ method: 'POST', url, headers: asProject(key), payload })
  const put = (url: string, payload: object, key = ws.projectKey) => cp.app.inject({ method: 'PUT', url, headers: asProject(key), payload })

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
    promptsetId = (await post('/api/promptsets', { name: 'greeting', description: 'Says hello' })).json().id
    emptyPromptsetId = (await post('/api/promptsets', { name: 'empty' })).json().id
    otherPromptsetId = (await post('/api/promptsets', { name: 'theirs' }, other.projectKey)).json().id
    await post(`/api/promptsets/${promptsetId}/prompts`, { value: 'Version one for ${name}', model: 'gpt-4o' })
    await post(`/api/promptsets/${promptsetId}/prompts`, {
      value: 'Hello ${name} from {{ city }}, {country}! ${undeclared} {not a placeholder}',
      variables: ['name', 'city', 'country'],
      model: 'gpt-4o-mini',
      modelSettings: { temperature: 0.2, max_tokens: 100 },
      tags: ['greeting', 'v2'],
      live: true,
    })
    await post(`/api/promptsets/${otherPromptsetId}/prompts`, { value: 'theirs', model: 'm', live: true }, other.projectKey)
  })
  after(() => cp.close())

  it('returns the promptset with exactly the live prompt, in the documented shape', async () => {
    const response = await get(`promptset_id=${promptsetId}`)
    assert.equal(response.statusCode, 200)
    assert.match(response.headers['content-type'] ?? '', /^application\/json/)
    const body = response.json()
    assert.deepEqual(Object.keys(body), ['id', 'name', 'description', 'projectId', 'createdAt', 'updatedAt', 'prompts'])
    assert.deepEqual({ ...body, createdAt: 'd', updatedAt: 'd', prompts: undefined }, {
      id: promptsetId, name: 'greeting', description: 'Says hello', projectId: ws.projectId, createdAt: 'd', updatedAt: 'd', prompts: undefined,
    })
    assert.equal(body.prompts.length, 1)
    const [prompt] = body.prompts
    assert.deepEqual(Object.keys(prompt), ['id', 'value', 'variables', 'model', 'modelSettings', 'version', 'live', 'tags', 'spanId', 'note', 'promptsetId', 'createdAt', 'updatedAt'])
    assert.deepEqual({ ...prompt, id: 'x', createdAt: 'd', updatedAt: 'd' }, {
      id: 'x',
      value: 'Hello ${name} from {{ city }}, {country}! ${undeclared} {not a placeholder}',
      variables: ['name', 'city', 'country'],
      model: 'gpt-4o-mini',
      modelSettings: { temperature: 0.2, max_tokens: 100 },
      version: 2,
      live: true,
      tags: ['greeting', 'v2'],
      spanId: null,
      note: '',
      promptsetId,
      createdAt: 'd',
      updatedAt: 'd',
    })
    for (const date of [body.createdAt, body.updatedAt, prompt.createdAt, prompt.updatedAt]) assert.equal(new Date(date).toISOString(), date)
  })

  it('accepts promptsetid as an alias and returns a given version', async () => {
    const live = await get(`promptsetid=${promptsetId}`)
    assert.equal(live.json().prompts[0].version, 2)
    const first = await get(`promptset_id=${promptsetId}&version=1`)
    assert.equal(first.statusCode, 200)
    assert.deepEqual([first.json().prompts[0].version, first.json().prompts[0].live, first.json().prompts[0].variables], [1, false, ['name']])
  })

  it('fills declared variables only, in all three syntaxes', async () => {
    const response = await get(`promptset_id=${promptsetId}&variables.name=Ada&variables.city=Paris&variables.country=France&variables.undeclared=nope`)
    assert.equal(response.statusCode, 200)
    assert.equal(response.json().prompts[0].value, 'Hello Ada from Paris, France! ${undeclared} {not a placeholder}')
  })

  it('decodes keys and values as a form does: spaces, +, &, %, = and unicode arrive intact', async () => {
    const value = 'a b+c&d=e%f/?#ü 😀 ${city} "q" \\ \n'
    const variables = { name: value, city: 'São Paulo', country: '100% ünïcødé' }
    const formEncoded = new URLSearchParams({ promptset_id: promptsetId, ...Object.fromEntries(Object.entries(variables).map(([k, v]) => [`variables.${k}`, v])) })
    assert.ok(formEncoded.toString().includes('+'), 'spaces travel as + in a form encoding')
    const percentEncoded = Object.entries({ promptset_id: promptsetId, ...Object.fromEntries(Object.entries(variables).map(([k, v]) => [`variables.${k}`, v])) })
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
      .join('&')
    for (const query of [formEncoded.toString(), percentEncoded]) {
      const response = await get(query)
      assert.equal(response.statusCode, 200, response.body)
      assert.equal(response.json().prompts[0].value, `Hello ${value} from São Paulo, 100% ünïcødé! \${undeclared} {not a placeholder}`)
    }
  })

  it('decodes variable names too (escaped characters, dotted names)', async () => {
    const created = await post(`/api/promptsets/${emptyPromptsetId}/prompts`, { value: '{user.first_name} and ${last}', variables: ['user.first_name', 'last'], model: 'm' })
    assert.equal(created.statusCode, 201)
    const response = await get(`promptset_id=${emptyPromptsetId}&version=1&variables.user%2Efirst_name=J+R&variables%2Elast=T%C3%B6lkien`)
    assert.equal(response.json().prompts[0].value, 'J R and Tölkien')
  })

  it('lists missing and empty declared variables in declared order (400) when any variable is given', async () => {
    const response = await get(`promptset_id=${promptsetId}&variables.city=Paris&variables.name=`)
    assert.equal(response.statusCode, 400)
    assert.deepEqual(response.json(), { message: 'Missing variables: name, country' })
    const onlyExtra = await get(`promptset_id=${promptsetId}&variables.other=x`)
    assert.deepEqual([onlyExtra.statusCode, onlyExtra.json()], [400, { message: 'Missing variables: name, city, country' }])
  })

  it('answers 401 for a missing or unknown key; a team key names its project', async () => {
    for (const key of ['', 'tw_proj_unknown00000000000000000000000000000000']) {
      const response = await get(`promptset_id=${promptsetId}`, key)
      assert.deepEqual([response.statusCode, response.json()], [401, unauthorized])
    }
    const teamKey = await get(`promptset_id=${promptsetId}`, ws.teamKey)
    assert.deepEqual([teamKey.statusCode, teamKey.json()], [400, { message: 'querystring/project_id: required with a team key or a signed-in session' }])
    const none = await cp.app.inject({ url: `/api/promptset?promptset_id=${promptsetId}` })
    assert.deepEqual([none.statusCode, none.json()], [401, unauthorized])
    // Twice each, so the second answer comes from the verifier's cache (admitted without a promise).
    for (let attempt = 0; attempt < 2; attempt++) {
      assert.equal((await cp.app.inject({ url: '/api/projects', headers: { 'x-api-key': ws.teamKey } })).statusCode, 200)
      assert.deepEqual((await get(`promptset_id=${promptsetId}`, 'tw_proj_unknown00000000000000000000000000000000')).json(), unauthorized)
      assert.equal((await get(`promptset_id=${promptsetId}`)).statusCode, 200)
    }
  })

  it('answers 404 for an unknown promptset and for another project’s promptset', async () => {
    for (const id of ['does-not-exist', otherPromptsetId]) {
      const response = await get(`promptset_id=${id}`)
      assert.deepEqual([response.statusCode, response.json()], [404, { message: 'Prompt registry not found' }])
    }
  })

  it('answers 404 when nothing is live and no version is given, and for an unknown version', async () => {
    const fresh = (await post('/api/promptsets', { name: 'nothing live' })).json().id
    const noLive = await get(`promptset_id=${fresh}`)
    assert.deepEqual([noLive.statusCode, noLive.json()], [404, { message: 'No live prompt in this registry; pass a version' }])
    const noVersion = await get(`promptset_id=${promptsetId}&version=7`)
    assert.deepEqual([noVersion.statusCode, noVersion.json()], [404, { message: 'Prompt version 7 not found' }])
    const huge = await get(`promptset_id=${promptsetId}&version=9999999999`)
    assert.deepEqual([huge.statusCode, huge.json()], [404, { message: 'Prompt version 9999999999 not found' }])
  })

  it('answers 400 for a version that is not a positive integer, and for a missing promptset_id', async () => {
    for (const version of ['abc', '0', '-1', '1.5', '', '1e3']) {
      const response = await get(`promptset_id=${promptsetId}&version=${encodeURIComponent(version)}`)
      assert.equal(response.statusCode, 400, version)
      assert.deepEqual(response.json(), { message: `querystring/version: expected a positive integer, got ${JSON.stringify(version)}` })
    }
    const missing = await get('version=1')
    assert.deepEqual([missing.statusCode, missing.json()], [400, { message: 'querystring/promptset_id: required' }])
  })

  it('serves a new live version at once after a write in this instance (cache invalidated)', async () => {
    assert.equal((await get(`promptset_id=${promptsetId}`)).json().prompts[0].version, 2)
    const switched = await put(`/api/promptsets/${promptsetId}/live`, { version: 1 })
    assert.equal(switched.statusCode, 200)
    assert.equal((await get(`promptset_id=${promptsetId}`)).json().prompts[0].version, 1)
    assert.equal((await get(`promptset_id=${promptsetId}&version=2`)).json().prompts[0].live, false)
    const created = await post(`/api/promptsets/${promptsetId}/prompts`, { value: 'v3 ${name}', model: 'm', live: true })
    assert.equal(created.json().version, 3)
    assert.equal((await get(`promptset_id=${promptsetId}`)).json().prompts[0].version, 3)
    await put(`/api/promptsets/${promptsetId}/live`, { version: null })
    assert.equal((await get(`promptset_id=${promptsetId}`)).statusCode, 404)
    await put(`/api/promptsets/${promptsetId}/live`, { version: 2 })
  })

  it('serves a label’s version, its variables filled the same way', async () => {
    assert.equal((await put(`/api/promptsets/${promptsetId}/labels/staging`, { version: 1 })).statusCode, 200)
    const unfilled = await get(`promptset_id=${promptsetId}&label=staging`)
    assert.equal(unfilled.statusCode, 200)
    const body = unfilled.json()
    assert.deepEqual(Object.keys(body.prompts[0]), ['id', 'value', 'variables', 'model', 'modelSettings', 'version', 'live', 'tags', 'spanId', 'note', 'promptsetId', 'createdAt', 'updatedAt'])
    assert.deepEqual([body.id, body.prompts.length, body.prompts[0].version, body.prompts[0].live, body.prompts[0].value], [promptsetId, 1, 1, false, 'Version one for ${name}'])
    const filled = await get(`promptset_id=${promptsetId}&label=staging&variables.name=Ada+L.`)
    assert.equal(filled.json().prompts[0].value, 'Version one for Ada L.')
    const missing = await get(`promptset_id=${promptsetId}&label=staging&variables.city=Paris`)
    assert.deepEqual([missing.statusCode, missing.json()], [400, { message: 'Missing variables: name' }])
    const production = await get(`promptset_id=${promptsetId}&label=production`)
    assert.deepEqual([production.json().prompts[0].version, production.json().prompts[0].live], [2, true])
  })

  it('answers 404 naming an unknown label, and 400 for a malformed label or for version and label together', async () => {
    const unknown = await get(`promptset_id=${promptsetId}&label=canary`)
    assert.deepEqual([unknown.statusCode, unknown.json()], [404, { message: 'Prompt label canary not found' }])
    const elsewhere = await get(`promptset_id=${otherPromptsetId}&label=production`)
    assert.deepEqual([elsewhere.statusCode, elsewhere.json()], [404, { message: 'Prompt registry not found' }])
    const both = await get(`promptset_id=${promptsetId}&version=1&label=staging`)
    assert.deepEqual([both.statusCode, both.json()], [400, { message: 'querystring: pass either version or label, not both' }])
    for (const label of ['Staging', '', '..', 'x'.repeat(37)]) {
      const malformed = await get(`promptset_id=${promptsetId}&label=${label}`)
      assert.deepEqual([malformed.statusCode, malformed.json()], [400, { message: 'querystring/label: must match pattern "^(?!\\.\\.?$)[a-z0-9_.-]{1,36}$"' }], label)
    }
    // A label named like a version is a label: cached apart from the version.
    assert.equal((await get(`promptset_id=${promptsetId}&version=2`)).statusCode, 200)
    const named2 = await get(`promptset_id=${promptsetId}&label=2`)
    assert.deepEqual([named2.statusCode, named2.json()], [404, { message: 'Prompt label 2 not found' }])
  })

  it('serves a label moved or removed in this instance at once (cache invalidated)', async () => {
    assert.equal((await get(`promptset_id=${promptsetId}&label=canary`)).statusCode, 404)
    await put(`/api/promptsets/${promptsetId}/labels/canary`, { version: 2 })
    assert.equal((await get(`promptset_id=${promptsetId}&label=canary`)).json().prompts[0].version, 2)
    await put(`/api/promptsets/${promptsetId}/labels/canary`, { version: 1 })
    assert.equal((await get(`promptset_id=${promptsetId}&label=canary`)).json().prompts[0].version, 1)
    await cp.app.inject({ method: 'DELETE', url: `/api/promptsets/${promptsetId}/labels/canary`, headers: asProject(ws.projectKey) })
    assert.equal((await get(`promptset_id=${promptsetId}&label=canary`)).statusCode, 404)
    const live = (await get(`promptset_id=${promptsetId}`)).json().prompts[0].version
    await put(`/api/promptsets/${promptsetId}/labels/production`, { version: 3 - live })
    assert.equal((await get(`promptset_id=${promptsetId}`)).json().prompts[0].version, 3 - live)
    await put(`/api/promptsets/${promptsetId}/labels/production`, { version: live })
  })

  it('serves a live version or label moved through another instance within 5 seconds', async () => {
    const otherInstance = await buildApp(loadConfig(ControlPlaneConfigSchema, { DATABASE_URL: cp.url, LOG_LEVEL: 'silent' }), { db: cp.db })
    try {
      await put(`/api/promptsets/${promptsetId}/labels/staging`, { version: 1 })
      // Both lookups cached here before the change.
      const before = (await get(`promptset_id=${promptsetId}`)).json().prompts[0].version
      assert.equal((await get(`promptset_id=${promptsetId}&label=staging`)).json().prompts[0].version, 1)
      const target = before === 1 ? 2 : 1
      const changeSentAt = Date.now()
      const changes = await Promise.all([
        otherInstance.inject({ method: 'PUT', url: `/api/promptsets/${promptsetId}/live`, headers: asProject(ws.projectKey), payload: { version: target } }),
        otherInstance.inject({ method: 'PUT', url: `/api/promptsets/${promptsetId}/labels/staging`, headers: asProject(ws.projectKey), payload: { version: 2 } }),
      ])
      assert.deepEqual(changes.map((changed) => changed.statusCode), [200, 200])
      let seenAfterMs = Number.POSITIVE_INFINITY
      while (Date.now() - changeSentAt < 7_000) {
        const [live, staging] = await Promise.all([get(`promptset_id=${promptsetId}`), get(`promptset_id=${promptsetId}&label=staging`)])
        if (live.json().prompts[0].version === target && staging.json().prompts[0].version === 2) {
          seenAfterMs = Date.now() - changeSentAt
          break
        }
        await sleep(50)
      }
      // 5 s plus this loop's polling step and request time.
      assert.ok(seenAfterMs <= 5_000 + 250, `seen ${seenAfterMs} ms after the change was sent`)
    } finally {
      await otherInstance.close()
    }
  })

  it('counts cache hits and misses in /metrics', async () => {
    await get(`promptset_id=${promptsetId}`)
    await get(`promptset_id=${promptsetId}`)
    const metrics = (await cp.app.inject({ url: '/metrics' })).body
    assert.match(metrics, /tracewell_control_plane_prompt_cache_lookups_total\{result="hit"\} [1-9]/)
    assert.match(metrics, /tracewell_control_plane_prompt_cache_lookups_total\{result="miss"\} [1-9]/)
  })
})
