import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { listEvaluators, listExperiments, listLlmConnections, listScores } from '@tracewell/db'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// Project keys ship inside applications: they send traces, feedback and scores and read, but
// setting up or running what calls a model on the project's provider key takes a team key or a
// signed-in console session (issue 48 §5). Only the evaluator gives `eval` scores.

const sessionSecret = 'session-secret-for-tests-0123456789abcdef'
const needs = (permission: string) => ({ message: `Not allowed: this needs the permission ${permission} (docs/permissions.md)` })

describe('who may spend', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  let connectionId: string
  let evaluatorId: string
  let datasetId: string
  let promptsetId: string
  let promptExperimentId: string
  const traceId = 'ab'.repeat(16)
  type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'
  const asTeam = (method: Method, url: string, payload?: object, as: Workspace = ws) =>
    cp.app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}project_id=${as.projectId}`, headers: { 'x-api-key': as.teamKey }, ...(payload ? { payload } : {}) })
  const asProject = (method: Method, url: string, payload?: object) => cp.app.inject({ method, url, headers: { 'x-api-key': ws.projectKey }, ...(payload ? { payload } : {}) })
  // Nothing is called: an address the outbound policy lets through without a resolver.
  const connection = { name: 'openai', provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-proj-abcdefghijklmnop' }

  before(async () => {
    cp = await startControlPlane({ LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex'), SESSION_SECRET: sessionSecret, OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' })
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
    connectionId = (await asTeam('POST', '/api/llm-connections', connection)).json().id
    evaluatorId = (await asTeam('POST', '/api/evaluators', { name: 'judge', connectionId, model: 'gpt-4o-mini', prompt: 'Rate {{output}}', scoreName: 'quality' })).json().id
    datasetId = (await asTeam('POST', '/api/datasets', { name: 'questions' })).json().id
    assert.equal((await asTeam('POST', `/api/datasets/${datasetId}/items`, { input: { country: 'France' } })).statusCode, 201)
    promptsetId = (await asTeam('POST', '/api/promptsets', { name: 'geo' })).json().id
    assert.equal((await asTeam('POST', `/api/promptsets/${promptsetId}/prompts`, { value: 'Capital of {{country}}?', model: 'gpt-4o-mini', live: true })).statusCode, 201)
    const experiment = await asTeam('POST', '/api/experiments', { datasetId, promptsetId, connectionId })
    assert.equal(experiment.statusCode, 202, experiment.body)
    promptExperimentId = experiment.json().id
  })
  after(() => cp.close())

  it('refuses a project key every route that sets up or runs model calls, 403 naming what it needs, and changes nothing', async () => {
    const refusals: Array<[Method, string, object | undefined, string]> = [
      ['POST', '/api/llm-connections', { ...connection, name: 'mine' }, 'llm-connections:write'],
      ['DELETE', `/api/llm-connections/${connectionId}`, undefined, 'llm-connections:write'],
      ['POST', '/api/evaluators', { name: 'mine', connectionId, model: 'gpt-4o-mini', prompt: '{{output}}', scoreName: 'q' }, 'evaluators:write'],
      ['PATCH', `/api/evaluators/${evaluatorId}`, { enabled: false }, 'evaluators:write'],
      ['DELETE', `/api/evaluators/${evaluatorId}`, undefined, 'evaluators:write'],
      ['POST', `/api/evaluators/${evaluatorId}/runs`, { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }, 'evaluators:write'],
      ['POST', '/api/experiments', { datasetId, promptsetId, connectionId }, 'experiments:run'],
      ['DELETE', `/api/experiments/${promptExperimentId}`, undefined, 'experiments:run'],
      ['POST', '/api/playground/runs', { connectionId, model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, 'playground:run'],
    ]
    for (const [method, url, payload, what] of refusals) {
      const response = await asProject(method, url, payload)
      assert.deepEqual([response.statusCode, response.json()], [403, needs(what)], `${method} ${url}`)
    }
    assert.deepEqual((await listLlmConnections(cp.db, ws.projectId)).map((c) => c.name), ['openai'])
    assert.deepEqual((await listEvaluators(cp.db, ws.projectId)).map((e) => [e.name, e.enabled]), [['judge', true]])
    assert.deepEqual((await listExperiments(cp.db, ws.projectId)).map((e) => e.id), [promptExperimentId])
    const runs = await asProject('GET', `/api/evaluators/${evaluatorId}/runs`)
    assert.deepEqual(runs.json(), { runs: [] })
  })

  it('still answers a project key’s reads of connections, evaluators, judgments and experiments', async () => {
    const reads = ['/api/llm-connections', '/api/evaluators', `/api/evaluators/${evaluatorId}`, `/api/evaluators/${evaluatorId}/runs`, `/api/evaluators/${evaluatorId}/judgments`, '/api/experiments', `/api/experiments/${promptExperimentId}`]
    for (const url of reads) assert.equal((await asProject('GET', url)).statusCode, 200, url)
  })

  it('lets a project key open, fill and delete an SDK experiment: its own code spends, not Tracewell', async () => {
    const created = await asProject('POST', '/api/experiments', { datasetId, name: 'sdk run' })
    assert.equal(created.statusCode, 201, created.body)
    assert.equal((await asProject('DELETE', `/api/experiments/${created.json().id}`)).statusCode, 204)
  })

  it('lets the console’s signed-in session set up what spends', async () => {
    const signIn = await cp.app.inject({ method: 'POST', url: '/api/session', headers: { 'x-tracewell-csrf': '1' }, payload: { apiKey: ws.teamKey } })
    const cookie = signIn.cookies.find((candidate) => candidate.name === 'tw_session')
    assert.ok(cookie, signIn.body)
    const headers = { cookie: `tw_session=${cookie.value}`, 'x-tracewell-csrf': '1' }
    const created = await cp.app.inject({ method: 'POST', url: `/api/llm-connections?project_id=${ws.projectId}`, headers, payload: { ...connection, name: 'from the console' } })
    assert.equal(created.statusCode, 201, created.body)
    const paused = await cp.app.inject({ method: 'PATCH', url: `/api/evaluators/${evaluatorId}?project_id=${ws.projectId}`, headers, payload: { enabled: false } })
    assert.deepEqual([paused.statusCode, paused.json().enabled], [200, false])
  })

  it('answers 404 for another project’s connection, in use or not: its id is not confirmed', async () => {
    for (const method of ['DELETE', 'POST'] as const) {
      const url = method === 'DELETE' ? `/api/llm-connections/${connectionId}` : '/api/evaluators'
      const payload = method === 'DELETE' ? undefined : { name: 'x', connectionId, model: 'm', prompt: '{{output}}', scoreName: 'q' }
      const response = await asTeam(method, url, payload, other)
      assert.equal(response.statusCode, method === 'DELETE' ? 404 : 400, response.body)
    }
    const inUse = await asTeam('DELETE', `/api/llm-connections/${connectionId}`)
    assert.deepEqual([inUse.statusCode, inUse.json().message], [409, 'An evaluator uses this LLM connection: delete the evaluator first'])
  })

  it('takes api and annotation scores from anyone, eval scores from nobody but the evaluator', async () => {
    const eval_ = { traceId, name: 'quality', value: 1, source: 'eval' }
    for (const send of [() => asProject('POST', '/api/scores', eval_), () => asTeam('POST', '/api/scores', eval_)]) {
      const refused = await send()
      assert.deepEqual([refused.statusCode, refused.json()], [400, { message: 'body/source: eval scores are given only by Tracewell’s evaluators; send api or annotation' }])
    }
    assert.equal((await asProject('POST', '/api/scores', { ...eval_, source: 'api' })).statusCode, 201)
    assert.equal((await asTeam('POST', '/api/scores', { ...eval_, source: 'annotation' })).statusCode, 201)
    const stored = await listScores(cp.db, { projectId: ws.projectId, limit: 10 })
    assert.deepEqual(stored.scores.map((score) => score.source).sort(), ['annotation', 'api'])
  })
})
