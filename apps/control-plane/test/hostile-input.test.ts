import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { countTeams, listProjectPromptsets, listPrompts, listTeamProjects } from '@tracewell/db'
import { seededRandom } from '@tracewell/test-support'
import { adminKey, seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// Input Postgres cannot store or compute with must be a 400 naming the field, never a 500.

let cp: TestControlPlane
let ws: Workspace
let promptsetId: string
before(async () => {
  // With the LLM connections' key, so that their routes are fuzzed past the 503 of a server without one.
  cp = await startControlPlane({ LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex') })
  ws = await seedWorkspace(cp.db, 'Acme')
  const created = await cp.app.inject({ method: 'POST', url: '/api/promptsets', headers: { 'x-api-key': ws.projectKey }, payload: { name: 'registry' } })
  promptsetId = created.json<{ id: string }>().id
})
after(() => cp.close())

const nul = (path: string) => ({ message: `${path}: must not contain the NUL character (\\u0000)` })

describe('a NUL character (\\u0000)', () => {
  it('in a body field: 400 naming the field, and nothing stored', async () => {
    const project = await cp.app.inject({ method: 'POST', url: '/api/projects', headers: { 'x-api-key': ws.teamKey }, payload: { name: 'a\u0000b' } })
    assert.deepEqual([project.statusCode, project.json()], [400, nul('body/name')])
    assert.deepEqual((await listTeamProjects(cp.db, ws.teamId)).map((p) => p.name), ['Acme project'])

    const teams = await countTeams(cp.db)
    const team = await cp.app.inject({ method: 'POST', url: '/api/teams', headers: { 'x-admin-key': adminKey }, payload: { name: '\u0000' } })
    assert.deepEqual([team.statusCode, team.json()], [400, nul('body/name')])
    assert.equal(await countTeams(cp.db), teams)

    const promptset = await cp.app.inject({ method: 'POST', url: '/api/promptsets', headers: { 'x-api-key': ws.projectKey }, payload: { name: 'ok', description: 'x\u0000' } })
    assert.deepEqual([promptset.statusCode, promptset.json()], [400, nul('body/description')])
    assert.deepEqual((await listProjectPromptsets(cp.db, ws.projectId)).map((r) => r.name), ['registry'])
  })

  it('in a prompt: value, tags, variables and modelSettings (keys too)', async () => {
    const valid = { value: 'Hello ${name}', model: 'gpt-4o' }
    const cases: Array<[object, string]> = [
      [{ ...valid, value: 'Hello\u0000' }, 'body/value'],
      [{ ...valid, tags: ['ok', 'b\u0000d'] }, 'body/tags/1'],
      [{ ...valid, variables: ['name\u0000'] }, 'body/variables/0'],
      [{ ...valid, modelSettings: { temperature: 0.2, stop: ['\u0000'] } }, 'body/modelSettings/stop/0'],
      [{ ...valid, modelSettings: { 'a\u0000': 1 } }, 'body/modelSettings/a\\u0000'],
      [{ ...valid, note: '\u0000' }, 'body/note'],
    ]
    for (const [payload, path] of cases) {
      const response = await cp.app.inject({ method: 'POST', url: `/api/promptsets/${promptsetId}/prompts`, headers: { 'x-api-key': ws.projectKey }, payload })
      assert.deepEqual([response.statusCode, response.json()], [400, nul(path)], path)
    }
    assert.deepEqual(await listPrompts(cp.db, promptsetId), [])
  })

  it('in a query parameter or path parameter', async () => {
    const key = { 'x-api-key': ws.projectKey }
    const cases: Array<[string, Record<string, string>, string]> = [
      ['/api/promptset?promptset_id=%00', key, 'querystring/promptset_id'],
      [`/api/promptset?promptset_id=${promptsetId}&variables.name=a%00`, key, 'querystring/variables.name'],
      ['/api/traces?from=2025-01-01%00', key, 'querystring/from'],
      ['/api/traces/ab%00', key, 'params/traceId'],
      ['/api/projects/p%00', { 'x-api-key': ws.teamKey }, 'params/projectId'],
      ['/api/api-keys?project_id=%00', { 'x-api-key': ws.teamKey }, 'querystring/project_id'],
      // A team key's project is looked up before the route's validator runs.
      ['/api/sessions/s?project_id=a%00b', { 'x-api-key': ws.teamKey }, 'querystring/project_id'],
      ['/api/traces?project_id=%00', { 'x-api-key': ws.teamKey }, 'querystring/project_id'],
      // Project-scoped routes look the team's project up before validation runs.
      ['/api/usage?project_id=%00', { 'x-api-key': ws.teamKey }, 'querystring/project_id'],
      ['/api/scores?project_id=a%00b', { 'x-api-key': ws.teamKey }, 'querystring/project_id'],
    ]
    for (const [url, headers, path] of cases) {
      const response = await cp.app.inject({ method: 'GET', url, headers })
      assert.deepEqual([response.statusCode, response.json()], [400, nul(path)], url)
    }
  })
})

describe('a hand-made trace cursor', () => {
  const cursor = (sort: string, value: string) => Buffer.from(JSON.stringify([sort, value, 'a'.repeat(32)])).toString('base64url')
  const list = (query: string) => cp.app.inject({ method: 'GET', url: `/api/traces?${query}`, headers: { 'x-api-key': ws.projectKey } })
  const refused = { message: 'querystring/cursor: not a nextCursor returned by this API for this sort' }

  it('out of any range of its sort: 400 naming the cursor', async () => {
    const cases: Array<[string, string]> = [
      ['time', '99999-01-01 00:00:00+00'],
      ['time', '0000-01-01 00:00:00+00'],
      ['time', '2026-13-45 00:00:00+00'],
      ['time', '99999999999999999999'],
      ['duration', '99999999999999999999'],
      ['tokens', '1e400'],
      ['cost', 'NaN'],
      ['duration', '1 or 1=1'],
    ]
    for (const [sort, value] of cases) {
      const response = await list(`sort=${sort}&cursor=${cursor(sort, value)}`)
      assert.deepEqual([response.statusCode, response.json()], [400, refused], `${sort} ${value}`)
    }
  })

  it('at the ends of the range it accepts: an empty page', async () => {
    const cases: Array<[string, string]> = [
      ['time', '9999-12-31 23:59:59.999999+00'],
      ['time', '0001-01-01 00:00:00+00'],
      ['duration', '-999999999999999999'],
      ['tokens', '-999999999999999999'],
      ['cost', '-1'],
    ]
    for (const [sort, value] of cases) {
      const response = await list(`sort=${sort}&order=desc&cursor=${cursor(sort, value)}`)
      assert.equal(response.statusCode, 200, `${sort} ${value}`)
      assert.deepEqual(response.json(), { traces: [], nextCursor: null }, `${sort} ${value}`)
    }
  })
})

describe('every control-plane route, fuzzed', () => {
  const SEED = 1_400_514
  const CASES = 400
  const random = seededRandom(SEED)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T

  // Strings Postgres, URL parsing, JSON or the prompt template engine might choke on.
  const hostileStrings = [
    '', ' ', '\u0000', 'a\u0000b', '%00', '%', '%zz', '\ud800', '😀', 'é', '\\', '"', "'; drop table teams; --", '../..', '${x}', '{{x}}', '{x}',
    'x'.repeat(300), 'x'.repeat(70_000), '-1', '0', '1e400', '99999999999999999999', 'null', 'true', '[]', '{}', 'NaN',
    '2025-13-45T99:99:99Z', '0000-01-01', '9999-12-31T23:59:59Z', '275760-09-13', '00000000-0000-0000-0000-000000000000',
  ]
  const hostileValue = (depth = 0): unknown => {
    const roll = random()
    if (roll < 0.45) return pick(hostileStrings)
    if (roll < 0.6) return pick([0, -1, 1.5, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, Number.MAX_SAFE_INTEGER])
    if (roll < 0.7) return pick([null, true, false])
    if (depth > 3) return pick(hostileStrings)
    if (roll < 0.85) return Array.from({ length: Math.floor(random() * 4) }, () => hostileValue(depth + 1))
    return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [pick(hostileStrings).slice(0, 50), hostileValue(depth + 1)]))
  }

  // Every byte escaped: encodeURIComponent throws on a lone surrogate (sent here as U+FFFD).
  const percentEncoded = (text: string) => [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('')

  interface Operation {
    method: string
    path: string
    parameters: Array<{ in: string; name: string }>
    bodyFields: string[]
  }

  it(`${CASES} random requests over every route get no 5xx (seed ${SEED})`, async () => {
    // The routes as the instance publishes them (its OpenAPI document, built from the registered routes).
    const document = (await cp.app.inject({ url: '/docs/json' })).json() as { paths: Record<string, Record<string, { parameters?: Operation['parameters']; requestBody?: { content: Record<string, { schema: { properties?: object } }> } }>> }
    const operations: Operation[] = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        parameters: operation.parameters ?? [],
        bodyFields: Object.keys(operation.requestBody?.content['application/json']?.schema.properties ?? {}),
      })),
    )
    assert.ok(operations.length >= 17, `${operations.length} routes`)
    const keys = [ws.teamKey, ws.projectKey, adminKey, 'tw_proj_unknown', '\u0000', '']
    const ids = [ws.projectId, ws.teamId, promptsetId, 'a'.repeat(32)]
    const rightKeyFor = (path: string) => (path === '/api/teams' ? adminKey : /^\/api\/(promptset|traces)/.test(path) ? ws.projectKey : ws.teamKey)
    const reached = new Set<string>()
    const statuses = new Set<number>()
    const started = Date.now()
    // Every route once, in turn, then random ones: with ~70 routes, 400 random picks missed one
    // in about a fifth of the runs.
    for (let round = 0; round < Math.max(CASES, operations.length); round++) {
      const operation = round < operations.length ? (operations[round] as Operation) : pick(operations)
      const path = operation.path.replace(/\{(\w+)\}/g, () => percentEncoded(String(random() < 0.4 ? pick(ids) : hostileValue())))
      const query = new URLSearchParams()
      for (const parameter of operation.parameters.filter((p) => p.in === 'query')) {
        if (random() < 0.7) query.append(parameter.name, String(random() < 0.3 ? pick(ids) : hostileValue()))
      }
      if (random() < 0.2) query.append(`variables.${pick(['a', 'x y', '\u0000'])}`, String(hostileValue()))
      const body =
        random() < 0.15
          ? pick(['{', 'null', '[]', '"x"', '{"name":', '\u0000', '{"name":"\\u0000"}'])
          : JSON.stringify(Object.fromEntries(operation.bodyFields.filter(() => random() < 0.7).map((field) => [field, hostileValue()])))
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      // Mostly the credential the route wants, so that requests get past authentication.
      const key = random() < 0.75 ? rightKeyFor(operation.path) : pick(keys)
      // A header cannot carry NUL on the wire; inject() would refuse it before the app saw it.
      if (!key.includes('\u0000')) headers[operation.path === '/api/teams' ? 'x-admin-key' : 'x-api-key'] = key
      const queryString = query.toString()
      const url = `${path}${queryString === '' ? '' : `?${queryString}`}`
      const response = await cp.app.inject({ method: operation.method as 'GET', url, headers, ...(operation.method === 'GET' || operation.method === 'DELETE' ? {} : { payload: body }) })
      assert.ok(response.statusCode < 500, `round ${round} (seed ${SEED}): ${operation.method} ${url} ${body.slice(0, 200)} → ${response.statusCode} ${response.body.slice(0, 300)}`)
      reached.add(`${operation.method} ${operation.path}`)
      statuses.add(response.statusCode)
    }
    assert.equal(reached.size, operations.length, 'every route was fuzzed at least once')
    // Past authentication into validation and the handlers, or the fuzzing tests little.
    for (const status of [200, 400, 401, 404]) assert.ok(statuses.has(status), `no ${status} among ${[...statuses].join(', ')}`)
    // Bounded: a few hundred requests through inject() take seconds, not minutes.
    assert.ok(Date.now() - started < 60_000)
  })
})
