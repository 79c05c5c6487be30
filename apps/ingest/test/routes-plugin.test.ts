import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { countSpans, findTraceSpans } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { apiKeysPlugin, createApp, metricsPlugin, type App } from '@tracewell/http'
import { apiKeyStore, dbPlugin } from '@tracewell/service'
import { createInProcessSpanBatchProducer } from '@tracewell/queue'
import { inProcessSpanBatchProcessor, SpanPricer } from '@tracewell/writer'
import { Registry } from 'prom-client'
import { sendTracesRoutes } from '../src/index.ts'
import { langtraceSpans, seedBody } from './support/fixtures.ts'
import { createTenant, type Tenant } from './support/ingest-harness.ts'

// The all-in-one process registers the trace routes into its own app, with its shared plugins
// and the in-process queue; the plugin must work there, even registered twice.

let database: TestDatabase
let app: App
let tenant: Tenant
before(async () => {
  database = await createTestDatabase()
  tenant = await createTenant(database.db)
  const producer = createInProcessSpanBatchProducer({ process: (batches) => inProcessSpanBatchProcessor(database.db, new SpanPricer({ db: database.db, metrics: new Registry() }))(batches).then(() => {}), maxSpansPerJob: 100, maxBacklogSpans: 1000 })
  app = createApp({ logger: false })
  await app.register(metricsPlugin)
  await app.register(dbPlugin, { db: database.db, closeOnShutdown: false })
  await app.register(apiKeysPlugin, { store: apiKeyStore(database.db), ttlMs: 1000 })
  const limits = { maxBodyBytes: 1 << 20, maxInflatedBytes: 4 << 20, maxSpansPerRequest: 100, maxJsonValues: 1_000_000, maxProtobufFields: 1_000_000 }
  await app.register(sendTracesRoutes, { producer, limits })
  await app.register(sendTracesRoutes, { producer, limits, prefix: '/second' })
  // A JSON route of the host app keeps its own parser and error handler.
  app.post('/echo', async (request) => request.body)
  await app.ready()
})
after(async () => {
  await app.close()
  await database.drop()
})

it('stores spans through the in-process queue before answering', async () => {
  const response = await app.inject({ method: 'POST', url: '/api/trace', headers: { 'x-api-key': tenant.projectKey, 'content-type': 'application/json' }, payload: seedBody })
  assert.equal(response.statusCode, 200)
  assert.equal(response.body, '{"status":200,"message":"Traces received successfully"}')
  assert.equal(await countSpans(database.db, tenant.projectId), 1)
  const second = await app.inject({ method: 'POST', url: '/second/api/trace', headers: { 'x-api-key': tenant.projectKey, 'content-type': 'application/json' }, payload: langtraceSpans(3) })
  assert.equal(second.statusCode, 200)
  assert.equal(await countSpans(database.db, tenant.projectId), 4)
})

it('leaves the host app its JSON parser, and counts both registrations in one set of metrics', async () => {
  const echo = await app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } })
  assert.deepEqual(echo.json(), { a: 1 })
  const metrics = await app.inject('/metrics')
  assert.match(metrics.body, /tracewell_ingest_requests_total\{route="\/second\/api\/trace",format="json",outcome="accepted"\} 1/)
})

it("takes Langfuse's OpenTelemetry exporter as it is: its path, Basic auth with the key as password, its langfuse.* names", async () => {
  const traceId = '1f'.repeat(16)
  const attribute = (key: string, stringValue: string) => ({ key, value: { stringValue } })
  const body = JSON.stringify({
    resourceSpans: [{
      resource: { attributes: [attribute('service.name', 'langfuse-app')] },
      scopeSpans: [{
        scope: { name: 'langfuse-sdk', version: '5.11.0' },
        spans: [{
          traceId, spanId: '00000000000000a1', name: 'chat-generation', kind: 1,
          startTimeUnixNano: '1767225600000000000', endTimeUnixNano: '1767225601000000000',
          attributes: [
            attribute('langfuse.observation.type', 'generation'),
            attribute('langfuse.observation.model.name', 'gpt-4o-mini'),
            attribute('langfuse.observation.usage_details', '{"input":120,"output":30,"total":150}'),
            attribute('langfuse.session.id', 'lf-session'),
            attribute('langfuse.user.id', 'lf-user'),
          ],
        }],
      }],
    }],
  })
  const authorization = `Basic ${Buffer.from(`pk-lf-anything:${tenant.projectKey}`).toString('base64')}`
  const response = await app.inject({ method: 'POST', url: '/api/public/otel/v1/traces', headers: { authorization, 'content-type': 'application/json' }, payload: body })
  assert.equal(response.statusCode, 200)
  const [span] = await findTraceSpans(database.db, tenant.projectId, traceId)
  assert.deepEqual(
    [span?.llmModel, span?.inputTokens, span?.outputTokens, span?.totalTokens, span?.sessionId, span?.userId],
    ['gpt-4o-mini', 120, 30, 150, 'lf-session', 'lf-user'],
  )
  assert.ok((span?.totalCostUsd ?? 0) > 0, 'priced from the price table')
  const wrongPassword = `Basic ${Buffer.from('pk-lf-anything:tw_proj_wrong').toString('base64')}`
  assert.equal((await app.inject({ method: 'POST', url: '/api/public/otel/v1/traces', headers: { authorization: wrongPassword, 'content-type': 'application/json' }, payload: body })).statusCode, 401)
})
