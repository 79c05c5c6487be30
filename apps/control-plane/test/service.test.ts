import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { generateApiKey } from '@tracewell/auth'
import { ControlPlaneConfigSchema, loadConfig } from '@tracewell/config'
import { createDb } from '@tracewell/db'
import { buildApp } from '../src/index.ts'
import { startControlPlane, type TestControlPlane } from './helper.ts'

describe('service endpoints', () => {
  let cp: TestControlPlane
  before(async () => {
    cp = await startControlPlane()
  })
  after(() => cp.close())

  it('answers /healthz and /readyz (Postgres answers)', async () => {
    assert.deepEqual((await cp.app.inject({ url: '/healthz' })).json(), { status: 'ok' })
    const ready = await cp.app.inject({ url: '/readyz' })
    assert.deepEqual([ready.statusCode, ready.json()], [200, { status: 'ok', checks: { postgres: 'ok' } }])
  })

  it('serves Prometheus metrics', async () => {
    await cp.app.inject({ url: '/api/projects' })
    const metrics = await cp.app.inject({ url: '/metrics' })
    assert.equal(metrics.statusCode, 200)
    assert.match(metrics.body, /tracewell_http_request_duration_seconds_count\{method="GET",route="\/api\/projects",status="401"\} 1/)
    assert.match(metrics.body, /# TYPE tracewell_control_plane_prompt_cache_lookups_total counter/)
  })

  it('publishes every control-plane route in the OpenAPI document, with error responses', async () => {
    const document = (await cp.app.inject({ url: '/docs/json' })).json()
    assert.match(document.openapi, /^3\./)
    const routes = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
    for (const route of [
      'POST /api/api-key', 'GET /api/api-keys', 'DELETE /api/api-keys/{id}', 'GET /api/promptset', 'POST /api/teams', 'POST /api/projects', 'GET /api/projects',
      'GET /api/projects/{projectId}/retention', 'PUT /api/projects/{projectId}/retention', 'POST /api/promptsets', 'GET /api/promptsets',
      'POST /api/promptsets/{promptsetId}/prompts', 'PUT /api/promptsets/{promptsetId}/live', 'GET /api/traces', 'GET /api/traces/{traceId}',
      'GET /api/promptsets/{promptsetId}/labels', 'PUT /api/promptsets/{promptsetId}/labels/{label}', 'DELETE /api/promptsets/{promptsetId}/labels/{label}',
      'GET /api/promptsets/{promptsetId}/label-history',
      'GET /api/projects/{projectId}/model-prices', 'POST /api/projects/{projectId}/model-prices',
      'PUT /api/projects/{projectId}/model-prices/{priceId}', 'DELETE /api/projects/{projectId}/model-prices/{priceId}',
    ]) {
      assert.ok(routes.includes(route), route)
    }
    const promptset = document.paths['/api/promptset'].get
    assert.deepEqual(Object.keys(promptset.responses).sort(), ['200', '400', '401', '403', '404', '500', '503'])
    assert.equal(promptset['x-permission'], 'prompts:read')
    assert.deepEqual(promptset.security, [{ apiKey: [] }])
    assert.ok(promptset.parameters.some((parameter: { name: string; in: string }) => parameter.name === 'label' && parameter.in === 'query'))
    const moveLabel = document.paths['/api/promptsets/{promptsetId}/labels/{label}'].put
    assert.deepEqual(Object.keys(moveLabel.responses).sort(), ['200', '400', '401', '403', '404', '409', '500', '503'])
    assert.equal(moveLabel['x-permission'], 'prompts:write | prompts:label-production')
    assert.deepEqual(moveLabel.security, [{ apiKey: [] }])
    assert.deepEqual(Object.keys(moveLabel.requestBody.content['application/json'].schema.properties), ['version', 'expectedVersion'])
    const changePrice = document.paths['/api/projects/{projectId}/model-prices/{priceId}'].put
    assert.deepEqual(Object.keys(changePrice.responses).sort(), ['200', '400', '401', '403', '404', '409', '500', '503'])
    const page = await cp.app.inject({ url: '/docs' })
    assert.ok([200, 302].includes(page.statusCode))
  })

  it('answers unknown routes with a message', async () => {
    const missing = await cp.app.inject({ url: '/api/nope' })
    assert.equal(missing.statusCode, 404)
    assert.equal(typeof missing.json().message, 'string')
  })
})

describe('a key store that cannot be reached', () => {
  it('answers 503 with Retry-After, as ingest does, not 500: the key may well be valid', async () => {
    const config = loadConfig(ControlPlaneConfigSchema, { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', LOG_LEVEL: 'silent' })
    const db = createDb({ databaseUrl: config.DATABASE_URL, poolSize: 1 })
    const app = await buildApp(config, { db })
    try {
      for (const url of ['/api/projects', '/api/promptset?promptset_id=x']) {
        const response = await app.inject({ url, headers: { 'x-api-key': generateApiKey('team') } })
        assert.equal(response.statusCode, 503, url)
        assert.equal(response.headers['retry-after'], '5')
        assert.deepEqual(response.json(), { message: 'API keys cannot be checked right now; retry after 5 s' })
      }
    } finally {
      await app.close()
      await db.destroy()
    }
  })
})
