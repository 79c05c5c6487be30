import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { AllInOneConfigSchema, loadConfig } from '@tracewell/config'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { buildAllInOneApp } from '../src/index.ts'

// An experiment whose model answers more than OUTBOUND_MAX_RESPONSE_BYTES: each item is a failed
// result with that reason, at its first attempt (the same reply would come again), and its trace
// is kept with the error; the model's connection is closed at the bound.

const projectKey = `tw_proj_${randomBytes(24).toString('hex')}`
const teamKey = `tw_team_${randomBytes(24).toString('hex')}`

describe('experiment items at the outbound reply bound', { timeout: 120_000 }, () => {
  let database: TestDatabase
  let app: App
  let models: Server
  let written = 0
  const api = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
    // The team key sets up what spends (a project key may not); the project is named.
    const response = await app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}project_id=geo`, headers: { 'x-api-key': teamKey }, ...(payload === undefined ? {} : { payload: payload as object }) })
    return { status: response.statusCode, body: response.json() }
  }

  before(async () => {
    models = createServer((request, response) => {
      request.resume()
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"')
      const piece = Buffer.alloc(64 * 1024, 97)
      const pump = () => {
        while (written < 50 * 1024 * 1024 && !response.destroyed) {
          written += piece.length
          if (!response.write(piece)) return void response.once('drain', pump)
        }
        if (!response.destroyed) response.end('"}}]}')
      }
      pump()
    })
    models.listen(0, '127.0.0.1')
    await once(models, 'listening')
    database = await createTestDatabase()
    const config = loadConfig(AllInOneConfigSchema, {
      DATABASE_URL: database.url,
      QUEUE_PREFIX: testQueuePrefix(),
      LOG_LEVEL: 'silent',
      GRPC_PORT: '0',
      INIT_TEAM_NAME: 'ops',
      INIT_TEAM_API_KEY: teamKey,
      INIT_PROJECT_NAME: 'geo',
      INIT_PROJECT_ID: 'geo',
      INIT_PROJECT_API_KEY: projectKey,
      LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      EVALUATOR_POLL_INTERVAL_MS: '200',
      EVALUATOR_BACKOFF_MS: '100',
      EVALUATOR_MAX_ATTEMPTS: '3',
      OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32',
      OUTBOUND_MAX_RESPONSE_BYTES: String(1024 * 1024),
    })
    ;({ app } = await buildAllInOneApp(config))
  })
  after(async () => {
    await app?.close()
    await database?.drop()
    models?.closeAllConnections()
    models?.close()
  })

  it('fails each item with the bound as its reason, once, and keeps its trace', async () => {
    const baseUrl = `http://127.0.0.1:${(models.address() as AddressInfo).port}/v1`
    const connection = await api('POST', '/api/llm-connections', { name: 'verbose', provider: 'openai', baseUrl, apiKey: 'sk-0123456789' })
    assert.equal(connection.status, 201, JSON.stringify(connection.body))
    const datasetId = (await api('POST', '/api/datasets', { name: 'capitals' })).body.id
    assert.equal((await api('POST', `/api/datasets/${datasetId}/items`, { items: [{ input: 'What is the capital of Peru?', expectedOutput: 'Lima' }] })).status, 201)
    const promptsetId = (await api('POST', '/api/promptsets', { name: 'geo' })).body.id
    assert.equal((await api('POST', `/api/promptsets/${promptsetId}/prompts`, { value: 'Tell me: {{input}}', model: 'm', live: true })).status, 201)
    const experiment = await api('POST', '/api/experiments', { datasetId, promptsetId, version: 1, connectionId: connection.body.id, evaluatorIds: [] })
    assert.equal(experiment.status, 202, JSON.stringify(experiment.body))
    let body: { status: string; results: Array<{ status: string; error: string | null; attempts: number; traceId: string | null }> } | undefined
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 150))) {
      body = (await api('GET', `/api/experiments/${experiment.body.id}`)).body
      if (body?.status === 'completed') break
    }
    const error = 'the model answered too much: the reply is larger than OUTBOUND_MAX_RESPONSE_BYTES (1048576 bytes) and was cut there'
    assert.deepEqual(body?.results.map((result) => [result.status, result.error, result.attempts]), [['failed', error, 1]])
    assert.ok(written < 16 * 1024 * 1024, `the model wrote ${written} bytes before its connection was closed`)
    const trace = await api('GET', `/api/traces/${body?.results[0]?.traceId}`)
    assert.deepEqual(trace.body.spans[0].status, { code: 2, message: error })
  })
})
