import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { seedWorkspace, startControlPlane, unauthorized, type TestControlPlane, type Workspace } from './helper.ts'

describe('project model prices (management API)', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
  })
  after(() => cp.close())

  const url = (projectId = ws.projectId) => `/api/projects/${projectId}/model-prices`
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, payload?: object, key = ws.teamKey) =>
    cp.app.inject({ method, url: path, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) })
  const rows = () => cp.db.selectFrom('project_model_prices').selectAll().orderBy('created_at').orderBy('id').execute()

  it('creates exact and glob prices (201), lists them newest first, and stores them', async () => {
    const exact = await call('POST', url(), {
      model: 'ft:gpt-4o-mini:acme:support',
      usdPerMillionTokens: { input: 0.3, output: 1.2, cacheRead: 0.15 },
      effectiveFrom: '2026-12-01T00:00:00Z',
    })
    assert.equal(exact.statusCode, 201)
    const created = exact.json()
    assert.deepEqual({ ...created, id: 'id', createdAt: 'at' }, {
      id: 'id', projectId: ws.projectId, model: 'ft:gpt-4o-mini:acme:support', match: 'exact',
      usdPerMillionTokens: { input: 0.3, output: 1.2, cacheRead: 0.15, cacheWrite: null, reasoning: null },
      effectiveFrom: '2026-12-01T00:00:00.000Z', createdAt: 'at',
    })
    const local = await call('POST', url(), { model: 'llama3*', match: 'glob', usdPerMillionTokens: { input: 0, output: 0 } })
    assert.equal(local.statusCode, 201)
    assert.deepEqual([local.json().match, local.json().effectiveFrom, local.json().usdPerMillionTokens], ['glob', null, { input: 0, output: 0, cacheRead: null, cacheWrite: null, reasoning: null }])

    const listed = await call('GET', url())
    assert.deepEqual([listed.statusCode, listed.json()], [200, { modelPrices: [local.json(), created] }])
    assert.deepEqual(
      (await rows()).map((row) => [row.project_id, row.model, row.match, row.input_usd_per_mtok, row.output_usd_per_mtok, row.cache_read_usd_per_mtok, row.effective_from?.toISOString() ?? null]),
      [
        [ws.projectId, 'ft:gpt-4o-mini:acme:support', 'exact', '0.3', '1.2', '0.15', '2026-12-01T00:00:00.000Z'],
        [ws.projectId, 'llama3*', 'glob', '0', '0', null, null],
      ],
    )
  })

  it('answers 409 for the same model, match and effective date twice', async () => {
    const body = { model: 'house-model', usdPerMillionTokens: { input: 1, output: 1 } }
    assert.equal((await call('POST', url(), body)).statusCode, 201)
    const again = await call('POST', url(), body)
    assert.deepEqual([again.statusCode, again.json()], [409, { message: 'A exact price for "house-model" with this effective date already exists' }])
    // Another date is another price.
    assert.equal((await call('POST', url(), { ...body, effectiveFrom: '2027-01-01T00:00:00Z' })).statusCode, 201)
  })

  it('answers 400 for a bad body, naming the field', async () => {
    const cases: Array<[object, string]> = [
      [{ model: '', usdPerMillionTokens: { input: 1, output: 1 } }, 'body/model: must NOT have fewer than 1 characters'],
      [{ model: 'm', usdPerMillionTokens: { input: -1, output: 1 } }, 'body/usdPerMillionTokens/input: must be >= 0'],
      [{ model: 'm', usdPerMillionTokens: { input: 1 } }, "body/usdPerMillionTokens: must have required property 'output'"],
      [{ model: 'm', match: 'regex', usdPerMillionTokens: { input: 1, output: 1 } }, 'body/match: must be equal to constant'],
      [{ model: 'm', usdPerMillionTokens: { input: 1, output: 1 }, effectiveFrom: 'next week' }, 'body/effectiveFrom: expected an ISO 8601 date-time such as 2025-01-31T00:00:00Z, got "next week"'],
      [{ model: '*a*b*c*d*e*f*g*h*i', match: 'glob', usdPerMillionTokens: { input: 1, output: 1 } }, 'body/model: at most 8 * wildcards'],
    ]
    for (const [payload, message] of cases) {
      const response = await call('POST', url(), payload)
      assert.deepEqual([response.statusCode, response.json()], [400, { message }], JSON.stringify(payload))
    }
  })

  it('deletes a price (204), then answers 404 for it', async () => {
    const created = (await call('POST', url(), { model: 'to-delete', usdPerMillionTokens: { input: 1, output: 1 } })).json()
    const deleted = await call('DELETE', `${url()}/${created.id}`)
    assert.deepEqual([deleted.statusCode, deleted.body], [204, ''])
    assert.equal((await rows()).some((row) => row.id === created.id), false)
    const again = await call('DELETE', `${url()}/${created.id}`)
    assert.deepEqual([again.statusCode, again.json()], [404, { message: 'Model price not found' }])
  })

  it('changes a price in place (200): same id and creation time, every field replaced', async () => {
    const created = (await call('POST', url(), { model: 'house-llm', usdPerMillionTokens: { input: 1, output: 2, reasoning: 3 }, effectiveFrom: '2026-06-01T00:00:00Z' })).json()
    const changed = await call('PUT', `${url()}/${created.id}`, { model: 'house-llm-*', match: 'glob', usdPerMillionTokens: { input: 0.5, output: 1.5, cacheRead: 0.25 } })
    assert.equal(changed.statusCode, 200)
    assert.deepEqual(changed.json(), {
      ...created,
      model: 'house-llm-*',
      match: 'glob',
      usdPerMillionTokens: { input: 0.5, output: 1.5, cacheRead: 0.25, cacheWrite: null, reasoning: null },
      effectiveFrom: null,
    })
    const stored = (await rows()).find((row) => row.id === created.id)
    assert.deepEqual([stored?.model, stored?.match, stored?.input_usd_per_mtok, stored?.reasoning_usd_per_mtok, stored?.effective_from], ['house-llm-*', 'glob', '0.5', null, null])
    assert.deepEqual((await call('GET', url())).json().modelPrices.find((price: { id: string }) => price.id === created.id), changed.json())
  })

  it('answers 409, 400 and 404 for a change as it does for a new price', async () => {
    const first = (await call('POST', url(), { model: 'pair-a', usdPerMillionTokens: { input: 1, output: 1 } })).json()
    const second = (await call('POST', url(), { model: 'pair-b', usdPerMillionTokens: { input: 1, output: 1 } })).json()
    const clash = await call('PUT', `${url()}/${second.id}`, { model: 'pair-a', usdPerMillionTokens: { input: 2, output: 2 } })
    assert.deepEqual([clash.statusCode, clash.json()], [409, { message: 'A exact price for "pair-a" with this effective date already exists' }])
    const bad = await call('PUT', `${url()}/${first.id}`, { model: 'pair-a', usdPerMillionTokens: { input: 1 } })
    assert.deepEqual([bad.statusCode, bad.json()], [400, { message: "body/usdPerMillionTokens: must have required property 'output'" }])
    const badGlob = await call('PUT', `${url()}/${first.id}`, { model: '*a*b*c*d*e*f*g*h*i', match: 'glob', usdPerMillionTokens: { input: 1, output: 1 } })
    assert.deepEqual([badGlob.statusCode, badGlob.json()], [400, { message: 'body/model: at most 8 * wildcards' }])
    await call('DELETE', `${url()}/${first.id}`)
    const gone = await call('PUT', `${url()}/${first.id}`, { model: 'pair-a', usdPerMillionTokens: { input: 1, output: 1 } })
    assert.deepEqual([gone.statusCode, gone.json()], [404, { message: 'Model price not found' }])
    assert.equal((await rows()).find((row) => row.id === second.id)?.model, 'pair-b', 'a refused change changes nothing')
  })

  it('is the team’s: 404 for another team’s project or price, 401 without a key, 403 for a project key’s change', async () => {
    const foreignProject = await call('GET', url(other.projectId))
    assert.deepEqual([foreignProject.statusCode, foreignProject.json()], [404, { message: 'Project not found' }])
    const theirs = (await call('POST', url(other.projectId), { model: 'theirs', usdPerMillionTokens: { input: 1, output: 1 } }, other.teamKey)).json()
    // Their price id under our project is not found, and is still theirs afterwards.
    const crossDelete = await call('DELETE', `${url()}/${theirs.id}`)
    assert.deepEqual([crossDelete.statusCode, crossDelete.json()], [404, { message: 'Model price not found' }])
    const crossChange = await call('PUT', `${url()}/${theirs.id}`, { model: 'mine now', usdPerMillionTokens: { input: 9, output: 9 } })
    assert.deepEqual([crossChange.statusCode, crossChange.json()], [404, { message: 'Model price not found' }])
    const intoTheirProject = await call('PUT', `${url(other.projectId)}/${theirs.id}`, { model: 'mine now', usdPerMillionTokens: { input: 9, output: 9 } })
    assert.deepEqual([intoTheirProject.statusCode, intoTheirProject.json()], [404, { message: 'Project not found' }])
    assert.equal((await call('GET', url(other.projectId), undefined, other.teamKey)).json().modelPrices[0].model, 'theirs')
    assert.equal((await call('GET', url(other.projectId), undefined, other.teamKey)).json().modelPrices.length, 1)
    for (const response of [
      await call('POST', url(), { model: 'x', usdPerMillionTokens: { input: 1, output: 1 } }, 'tw_team_unknown'),
      await cp.app.inject({ method: 'DELETE', url: `${url()}/${theirs.id}` }),
    ]) {
      assert.deepEqual([response.statusCode, response.json()], [401, unauthorized])
    }
    // A project key reads its project's prices (settings:read) and changes none (settings:write).
    assert.equal((await call('GET', url(), undefined, ws.projectKey)).statusCode, 200)
    const change = await call('PUT', `${url()}/${theirs.id}`, { model: 'x', usdPerMillionTokens: { input: 1, output: 1 } }, ws.projectKey)
    assert.deepEqual([change.statusCode, change.json()], [403, { message: 'Not allowed: this needs the permission settings:write (docs/permissions.md)' }])
  })
})
