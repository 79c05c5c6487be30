import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { isPermission, permissions } from '@tracewell/policy'
import { loneSurrogateJson, nestedArraysJson } from '@tracewell/test-support'
import { addPerson, signIn } from './people.helper.ts'
import { adminKey, seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// Every JSON-body route of the control plane, as its OpenAPI document (built from the registered
// routes) lists them, sent each body that parses badly or holds what Postgres cannot store: a 400
// naming where, never a 500, and the process serves on (issue 48 §7).

interface Parameter {
  in: string
  name: string
  schema?: { type?: string }
}
interface Operation {
  parameters?: Parameter[]
  'x-permission'?: string
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown>; anyOf?: Array<{ properties?: Record<string, unknown> }> } }> }
}

const surrogate = 'must not contain a lone UTF-16 surrogate (\\ud800–\\udfff); send well-formed Unicode'
const tooDeep = 'nested deeper than 100 levels of arrays and objects'


/** Whether a route's permission is for people only (a key is refused before the body is read). */
const peopleOnly = (access: string | undefined) => access !== undefined && isPermission(access) && (permissions[access] as { people?: true }).people === true

describe('hostile JSON bodies on every JSON route', () => {
  let cp: TestControlPlane
  let ws: Workspace
  before(async () => {
    cp = await startControlPlane({ LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex'), SESSION_SECRET: 'session-secret-for-tests-0123456789abcdef' })
    ws = await seedWorkspace(cp.db, 'Acme')
    await addPerson(cp.db, ws.teamId, 'owner', 'owner@acme.example')
    ownerCookie = await signIn(cp.app, 'owner@acme.example')
  })
  after(() => cp.close())
  let ownerCookie: string

  it('answers 400 naming where, for malformed JSON, lone surrogates and nesting 8,000 deep', async () => {
    const document = (await cp.app.inject({ url: '/docs/json' })).json() as { paths: Record<string, Record<string, Operation>> }
    const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => operation.requestBody?.content['application/json'] !== undefined)
        .map(([method, operation]) => ({ method: method.toUpperCase() as 'POST', path, operation })),
    )
    assert.ok(routes.length >= 20, `${routes.length} JSON-body routes`)
    const tried: string[] = []
    for (const { method, path, operation } of routes) {
      // Path parameters that pass their own schemas (ids, hex trace ids, label names, versions), so that the body is what is judged;
      // the project is the team's own, as authorize admits only that one before the body is read.
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => {
        if (name === 'projectId') return ws.projectId
        if (name === 'teamId') return ws.teamId
        const parameter = operation.parameters?.find((candidate) => candidate.in === 'path' && candidate.name === name)
        return parameter?.schema?.type === 'integer' ? '1' : 'a'.repeat(32)
      })
      const scoped = path === '/api/teams' || !operation.parameters?.some((p) => p.in === 'query' && p.name === 'project_id') ? url : `${url}?project_id=${ws.projectId}`
      const headers: Record<string, string> = { 'content-type': 'application/json', 'x-tracewell-csrf': '1' }
      if (path === '/api/teams') headers['x-admin-key'] = adminKey
      // A person's own account, a team's own routes and what only people do take the owner's session, not a key.
      else if (path.includes('{teamId}') || operation['x-permission'] === 'signed-in' || peopleOnly(operation['x-permission'])) headers.cookie = ownerCookie
      else if (operation['x-permission'] !== 'anyone') headers['x-api-key'] = ws.teamKey
      const schema = operation.requestBody?.content['application/json']?.schema
      const field = Object.keys(schema?.properties ?? schema?.anyOf?.find((option) => option.properties)?.properties ?? {})[0] ?? 'value'
      const cases: Array<[string, (message: string) => boolean, string]> = [
        [`{"${field}": `, (message) => message.startsWith('body: not valid JSON: '), 'malformed'],
        [`{"${field}": ${loneSurrogateJson}}`, (message) => message === `body/${field}: ${surrogate}`, 'lone surrogate'],
        [`{${loneSurrogateJson}: 1}`, (message) => message === `body/\\ud800: ${surrogate}`, 'lone surrogate in a key'],
        [`{"${field}": ${nestedArraysJson(8_000)}}`, (message) => message === `body/${field}/0/0/0/…: ${tooDeep}`, 'nested 8,000 deep'],
      ]
      for (const [payload, named, what] of cases) {
        const response = await cp.app.inject({ method, url: scoped, headers, payload })
        const message = response.headers['content-type']?.toString().startsWith('application/json') ? (response.json() as { message?: string }).message ?? '' : response.body
        assert.ok(response.statusCode === 400 && named(message), `${method} ${path}, ${what}: ${response.statusCode} ${response.body.slice(0, 300)}`)
      }
      tried.push(`${method} ${path}`)
    }
    assert.equal(tried.length, routes.length)
    // Still serving, and what it stored is intact.
    const listed = await cp.app.inject({ url: `/api/datasets?project_id=${ws.projectId}`, headers: { 'x-api-key': ws.teamKey } })
    assert.deepEqual([listed.statusCode, listed.json()], [200, { datasets: [] }])
  })

  it('still takes nesting up to the limit (the body itself the first of 100 levels) and well-formed Unicode, surrogate pairs included', async () => {
    const created = await cp.app.inject({ method: 'POST', url: `/api/datasets?project_id=${ws.projectId}`, headers: { 'x-api-key': ws.teamKey }, payload: { name: 'deep' } })
    const url = `/api/datasets/${created.json().id}/items?project_id=${ws.projectId}`
    const payload = `{"input": {"text": "caf\\u00e9 \\ud83d\\ude00", "nested": ${nestedArraysJson(98)}}}`
    const added = await cp.app.inject({ method: 'POST', url, headers: { 'x-api-key': ws.teamKey, 'content-type': 'application/json' }, payload })
    assert.equal(added.statusCode, 201, added.body)
    assert.equal(added.json().items[0].input.text, 'café 😀')
  })
})
