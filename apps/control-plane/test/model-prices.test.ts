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
  const call = (method: 'GET' | 'POST' | 'DELETE', path: string, payload?: object, key = ws.teamKey) =>
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

  it('is the team’s: 404 for another team’s project or price, 401 without a team key', async () => {
    const foreignProject = await call('GET', url(other.projectId))
    assert.deepEqual([foreignProject.statusCode, foreignProject.json()], [404, { message: 'Project not found' }])
    const theirs = (await call('POST', url(other.projectId), { model: 'theirs', usdPerMillionTokens: { input: 1, output: 1 } }, other.teamKey)).json()
    // Their price id under our project is not found, and is still theirs afterwards.
    const crossDelete = await call('DELETE', `${url()}/${theirs.id}`)
    assert.deepEqual([crossDelete.statusCode, crossDelete.json()], [404, { message: 'Model price not found' }])
    assert.equal((await call('GET', url(other.projectId), undefined, other.teamKey)).json().modelPrices.length, 1)
    for (const response of [
      await call('GET', url(), undefined, ws.projectKey),
      await call('POST', url(), { model: 'x', usdPerMillionTokens: { input: 1, output: 1 } }, 'tw_team_unknown'),
      await cp.app.inject({ method: 'DELETE', url: `${url()}/${theirs.id}` }),
    ]) {
      assert.deepEqual([response.statusCode, response.json()], [401, unauthorized])
    }
  })
})
