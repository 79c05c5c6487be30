import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { SpanKind } from '@opentelemetry/api'
import { testEnvironment } from '@tracewell/config'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { callJson } from '../src/api-client.ts'
import { chatAttributes, otlpTracerProvider, type OtlpEncoding } from '../src/otel-clients.ts'
import { eventually, startAll, startService, type RunningService } from '../src/processes.ts'
import { ownMetricNames, promtoolComplaints } from '../src/promtool.ts'
import { redoclyProblems } from '../src/redocly.ts'

// The four services as separate processes over the real Postgres and Redis, driven by the real
// OpenTelemetry exporters and the real Langtrace TypeScript SDK.

const adminKey = `admin-${randomUUID()}-${randomUUID()}`
const cronKey = `cron-${randomUUID()}`

interface StoredSpan {
  spanId: string
  parentSpanId: string | null
  name: string
  kind: number
  serviceName: string | null
  llmModel: string | null
  inputTokens: number | null
  attributes: Record<string, Record<string, unknown>>
}

describe('separately started services with real clients', () => {
  let database: TestDatabase
  let ingest: RunningService
  let writer: RunningService
  let controlPlane: RunningService
  let janitor: RunningService
  let teamKey: string
  let projectId: string
  let projectKey: string

  before(async () => {
    database = await createTestDatabase()
    const { REDIS_URL } = testEnvironment()
    const shared = { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: testQueuePrefix('e2e'), KEY_CACHE_TTL_MS: '500' }
    ;[ingest, writer, controlPlane, janitor] = await startAll([
      () => startService('ingest', 'apps/ingest/src/server.ts', shared),
      () => startService('writer', 'apps/writer/src/server.ts', shared),
      () => startService('control-plane', 'apps/control-plane/src/server.ts', { ...shared, ADMIN_API_KEY: adminKey }),
      () => startService('janitor', 'apps/janitor/src/server.ts', { ...shared, CRON_API_KEY: cronKey }),
    ] as const)

    const team = await callJson<{ id: string; apiKey: string }>(`${controlPlane.url}/api/teams`, { method: 'POST', headers: { 'x-admin-key': adminKey }, body: { name: 'e2e team' } })
    assert.equal(team.status, 201)
    teamKey = team.body.apiKey
    const project = await callJson<{ id: string }>(`${controlPlane.url}/api/projects`, { method: 'POST', headers: { 'x-api-key': teamKey }, body: { name: 'e2e project' } })
    assert.equal(project.status, 201)
    projectId = project.body.id
    const key = await callJson<{ apiKey: string }>(`${controlPlane.url}/api/api-key?project_id=${projectId}`, { method: 'POST', headers: { 'x-api-key': teamKey } })
    assert.equal(key.status, 200)
    projectKey = key.body.apiKey
  })

  after(async () => {
    await Promise.all([ingest, writer, controlPlane, janitor].filter(Boolean).map((service) => service.stop()))
    await database?.drop()
  })

  async function readTrace(traceId: string, spanCount: number): Promise<StoredSpan[]> {
    return eventually(async () => {
      const response = await callJson<{ spans: StoredSpan[] }>(`${controlPlane.url}/api/traces/${traceId}`, { headers: { 'x-api-key': projectKey } })
      return response.status === 200 && response.body.spans.length === spanCount ? response.body.spans : undefined
    }, 20_000, `trace ${traceId} with ${spanCount} spans`)
  }

  for (const [encoding, path] of [
    ['json', '/v1/traces'],
    ['json', '/api/trace'],
    ['protobuf', '/v1/traces'],
    ['protobuf', '/api/trace'],
    ['grpc', 'the gRPC port'],
  ] as Array<[OtlpEncoding, string]>) {
    it(`stores spans from the OpenTelemetry OTLP ${encoding} exporter sent to ${path}, attributes intact`, async () => {
      const url = encoding === 'grpc' ? `http://${ingest.grpcAddress}` : `${ingest.url}${path}`
      const provider = otlpTracerProvider({ url, apiKey: projectKey, encoding, serviceName: `svc-${encoding}` })
      const tracer = provider.getTracer('e2e', '1.0.0')
      const root = tracer.startSpan('handle_question', { kind: SpanKind.SERVER })
      const rootContext = root.spanContext()
      const { trace, context } = await import('@opentelemetry/api')
      const child = tracer.startSpan('openai.chat', { kind: SpanKind.CLIENT, attributes: chatAttributes('gpt-4o') }, trace.setSpan(context.active(), root))
      child.end()
      root.end()
      await provider.forceFlush()
      await provider.shutdown()

      const spans = await readTrace(rootContext.traceId, 2)
      const llm = spans.find((span) => span.name === 'openai.chat')
      assert.ok(llm)
      assert.equal(llm.parentSpanId, rootContext.spanId)
      assert.equal(llm.kind, 3, 'CLIENT in OTLP numbering')
      assert.equal(llm.serviceName, `svc-${encoding}`)
      assert.equal(llm.llmModel, 'gpt-4o')
      assert.equal(llm.inputTokens, 21)
      assert.deepEqual(llm.attributes['llm.request.messages'], { stringValue: chatAttributes('gpt-4o')['llm.request.messages'] })
      assert.deepEqual(llm.attributes['gen_ai.usage.output_tokens'], { intValue: '3' })
    })
  }

  it('stores spans from the Langtrace TypeScript SDK and serves its getPromptFromRegistry', async () => {
    const Langtrace = await import('@langtrase/typescript-sdk')
    Langtrace.init({ api_key: projectKey, api_host: `${ingest.url}/api/trace`, batch: false, disable_latest_version_check: true, logging: { disable: true } })
    const { trace } = await import('@opentelemetry/api')
    const tracer = trace.getTracer('langtrace-e2e')
    // The SDK's sampler exports only spans its instrumentations mark as Langtrace's own.
    const sdkSpanAttributes = { 'langtrace.sdk.name': '@langtrase/typescript-sdk', 'langtrace.service.name': 'anthropic' }
    const span = tracer.startSpan('anthropic.messages.create', {
      kind: SpanKind.CLIENT,
      attributes: { ...chatAttributes('claude-3-haiku'), ...sdkSpanAttributes, 'llm.vendor': 'anthropic' },
    })
    const traceId = span.spanContext().traceId
    span.end()
    const [stored] = await readTrace(traceId, 1)
    assert.equal(stored?.llmModel, 'claude-3-haiku')
    assert.equal(stored?.kind, 3)
    assert.deepEqual(stored?.attributes['llm.vendor'], { stringValue: 'anthropic' })

    // The prompt registry, through the SDK's own function (it reads LANGTRACE_API_HOST/KEY).
    const registry = await callJson<{ id: string }>(`${controlPlane.url}/api/promptsets`, { method: 'POST', headers: { 'x-api-key': projectKey }, body: { name: 'support' } })
    assert.equal(registry.status, 201)
    const create = (value: string, live: boolean) =>
      callJson(`${controlPlane.url}/api/promptsets/${registry.body.id}/prompts`, { method: 'POST', headers: { 'x-api-key': projectKey }, body: { value, model: 'gpt-4o', live } })
    assert.equal((await create('Hello ${name}, you asked about {{topic}}.', false)).status, 201)
    assert.equal((await create('Hi ${name}! Topic: {topic}', true)).status, 201)
    process.env.LANGTRACE_API_HOST = controlPlane.url
    process.env.LANGTRACE_API_KEY = projectKey
    const live = await Langtrace.getPromptFromRegistry(registry.body.id)
    assert.equal(live.version, 2)
    assert.equal(live.value, 'Hi ${name}! Topic: {topic}')
    const filled = await Langtrace.getPromptFromRegistry(registry.body.id, { prompt_version: 1, variables: { name: 'Zoë & co + 100%', topic: 'a=b?c' } })
    assert.equal(filled.value, 'Hello Zoë & co + 100%, you asked about a=b?c.')

    // A rollback by moving the production label: the SDK, unchanged, gets version 1 as the live one.
    const rolledBack = await callJson(`${controlPlane.url}/api/promptsets/${registry.body.id}/labels/production`, {
      method: 'PUT', headers: { 'x-api-key': projectKey }, body: { version: 1, expectedVersion: 2 },
    })
    assert.equal(rolledBack.status, 200)
    const afterRollback = await Langtrace.getPromptFromRegistry(registry.body.id)
    assert.deepEqual([afterRollback.version, afterRollback.live], [1, true])
  })

  it('rotates a project key: the new one works, the revoked one is refused within 5 s', async () => {
    const created = await callJson<{ apiKey: string }>(`${controlPlane.url}/api/api-key?project_id=${projectId}`, { method: 'POST', headers: { 'x-api-key': teamKey } })
    const newKey = created.body.apiKey
    const listed = await callJson<{ apiKeys: Array<{ id: string; prefix: string }> }>(`${controlPlane.url}/api/api-keys?project_id=${projectId}`, { headers: { 'x-api-key': teamKey } })
    const oldEntry = listed.body.apiKeys.find((key) => projectKey.startsWith(key.prefix) && !newKey.startsWith(key.prefix))
    assert.ok(oldEntry, 'the old key is listed by its prefix')
    assert.ok(!JSON.stringify(listed.body).includes(projectKey), 'no secret in the list')
    const revoked = await fetch(`${controlPlane.url}/api/api-keys/${oldEntry.id}`, { method: 'DELETE', headers: { 'x-api-key': teamKey } })
    assert.equal(revoked.status, 204)

    const send = (key: string) =>
      fetch(`${ingest.url}/api/trace`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ resourceSpans: [] }) })
    const startedAt = Date.now()
    await eventually(async () => ((await send(projectKey)).status === 401 ? true : undefined), 5_000, 'the revoked key to be refused')
    assert.ok(Date.now() - startedAt <= 5_000)
    assert.deepEqual(await (await send(projectKey)).json(), { status: 401, message: 'Invalid API key' })
    assert.equal((await send(newKey)).status, 200)
    projectKey = newKey
  })

  it('serves metrics promtool accepts, every one of ours named tracewell_<service>_… or tracewell_http_…', async () => {
    const prefixes: Record<string, string> = { ingest: 'tracewell_ingest_', writer: 'tracewell_writer_', 'control-plane': 'tracewell_control_plane_', janitor: 'tracewell_janitor_' }
    for (const service of [ingest, writer, controlPlane, janitor]) {
      const scrape = await (await fetch(`${service.url}/metrics`)).text()
      assert.deepEqual(promtoolComplaints(scrape), [], `${service.name}: promtool check metrics`)
      const names = ownMetricNames(scrape)
      assert.ok(names.some((name) => name.startsWith(prefixes[service.name]!)), `${service.name} has metrics of its own: ${names.join(', ')}`)
      for (const name of names) assert.ok(name.startsWith(prefixes[service.name]!) || name.startsWith('tracewell_http_'), `${service.name}: ${name}`)
      assert.doesNotMatch(scrape, /project(_id)?="/, `${service.name}: no project label`)
    }
  })

  it('publishes OpenAPI documents that redocly lints clean, an operationId on every operation', async () => {
    for (const service of [ingest, controlPlane, janitor]) {
      const document = await (await fetch(`${service.url}/docs/json`)).text()
      assert.equal(redoclyProblems(document), null, `${service.name}: redocly lint`)
      const operations = Object.values((JSON.parse(document) as { paths: Record<string, Record<string, { operationId?: string }>> }).paths).flatMap((path) => Object.values(path))
      assert.ok(operations.length > 0 && operations.every((operation) => typeof operation.operationId === 'string'), `${service.name}: operationIds`)
    }
  })

  it('cleans up spans past the project retention, and keeps the rest', async () => {
    const provider = otlpTracerProvider({ url: `${ingest.url}/v1/traces`, apiKey: projectKey, encoding: 'protobuf', serviceName: 'retention' })
    const tracer = provider.getTracer('e2e')
    const old = tracer.startSpan('old call', { startTime: new Date(Date.now() - 10 * 86_400_000) })
    old.end(new Date(Date.now() - 10 * 86_400_000 + 1000))
    const fresh = tracer.startSpan('fresh call')
    fresh.end()
    await provider.forceFlush()
    await provider.shutdown()
    await readTrace(old.spanContext().traceId, 1)
    await readTrace(fresh.spanContext().traceId, 1)

    const policy = await callJson(`${controlPlane.url}/api/projects/${projectId}/retention`, { method: 'PUT', headers: { 'x-api-key': teamKey }, body: { enabled: true, retentionDays: 7 } })
    assert.equal(policy.status, 200)
    const run = await callJson<{ success: boolean; deletedSpans: number }>(`${janitor.url}/api/cron/cleanup-traces`, { headers: { 'cron-api-key': cronKey } })
    assert.equal(run.status, 200)
    assert.equal(run.body.success, true)
    assert.equal(run.body.deletedSpans, 1)
    const gone = await callJson(`${controlPlane.url}/api/traces/${old.spanContext().traceId}`, { headers: { 'x-api-key': projectKey } })
    assert.equal(gone.status, 404)
    const kept = await callJson(`${controlPlane.url}/api/traces/${fresh.spanContext().traceId}`, { headers: { 'x-api-key': projectKey } })
    assert.equal(kept.status, 200)
    const read = await callJson<{ lastDeletedSpans: number; cleanup: { endpoint: string; schedule: null; nextRunAt: null; lastRun: { trigger: string; outcome: string; deletedSpans: number } } }>(
      `${controlPlane.url}/api/projects/${projectId}/retention`, { headers: { 'x-api-key': teamKey } },
    )
    assert.equal(read.body.lastDeletedSpans, 1)
    // The control plane, a process of its own, says what the janitor recorded: its endpoint asks
    // for the cron key, a CronJob calls it (no schedule of its own), and its last run.
    const { cleanup } = read.body
    assert.deepEqual([cleanup.endpoint, cleanup.schedule, cleanup.nextRunAt], ['cron-api-key', null, null])
    assert.deepEqual([cleanup.lastRun.trigger, cleanup.lastRun.outcome, cleanup.lastRun.deletedSpans], ['request', 'complete', 1])
  })
})
