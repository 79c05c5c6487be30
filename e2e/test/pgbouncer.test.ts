import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { testEnvironment } from '@tracewell/config'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { callJson } from '../src/api-client.ts'
import { otlpTracerProvider } from '../src/otel-clients.ts'
import { pgbouncerBinary, startPgBouncer, type OwnPgBouncer } from '../src/pgbouncer.ts'
import { eventually, startAll, startService, type RunningService } from '../src/processes.ts'

// Every service through Debian's PgBouncer in transaction pooling mode, where consecutive
// transactions of one client connection may run on different server connections: no session
// state may outlive a transaction (a named prepared statement, a session advisory lock, a SET).
// Four server connections are shared by two writers (their COPYs and the summariser's fold),
// ingest, the control plane and the janitor.

const adminKey = `admin-${randomUUID()}-${randomUUID()}`
const cronKey = `cron-${randomUUID()}`
const POOL_SIZE = 4

describe('the services through PgBouncer in transaction pooling mode', { skip: !pgbouncerBinary && 'pgbouncer is not installed', timeout: 240_000 }, () => {
  let database: TestDatabase
  let bouncer: OwnPgBouncer
  let services: RunningService[] = []
  let controlPlane: RunningService
  let ingest: RunningService
  let janitor: RunningService
  let teamKey: string
  let projectId: string
  let projectKey: string

  before(async () => {
    database = await createTestDatabase()
    bouncer = await startPgBouncer({ postgresPort: Number(new URL(database.url).port || 5432), poolSize: POOL_SIZE })
    const { REDIS_URL } = testEnvironment()
    const through = { DATABASE_URL: bouncer.urlOf(new URL(database.url).pathname.slice(1)), REDIS_URL, QUEUE_PREFIX: testQueuePrefix('e2e-pgbouncer'), KEY_CACHE_TTL_MS: '500' }
    services = await startAll([
      () => startService('ingest', 'apps/ingest/src/server.ts', through),
      () => startService('writer', 'apps/writer/src/server.ts', through),
      () => startService('writer 2', 'apps/writer/src/server.ts', through),
      () => startService('control-plane', 'apps/control-plane/src/server.ts', { ...through, ADMIN_API_KEY: adminKey }),
      () => startService('janitor', 'apps/janitor/src/server.ts', { ...through, CRON_API_KEY: cronKey }),
    ] as const)
    ;[ingest, , , controlPlane, janitor] = services as [RunningService, RunningService, RunningService, RunningService, RunningService]
    const team = await callJson<{ apiKey: string }>(`${controlPlane.url}/api/teams`, { method: 'POST', headers: { 'x-admin-key': adminKey }, body: { name: 'pgbouncer' } })
    assert.equal(team.status, 201)
    teamKey = team.body.apiKey
    const project = await callJson<{ id: string }>(`${controlPlane.url}/api/projects`, { method: 'POST', headers: { 'x-api-key': teamKey }, body: { name: 'pgbouncer' } })
    projectId = project.body.id
    const key = await callJson<{ apiKey: string }>(`${controlPlane.url}/api/api-key?project_id=${projectId}`, { method: 'POST', headers: { 'x-api-key': teamKey } })
    projectKey = key.body.apiKey
  })

  after(async () => {
    await Promise.all(services.map((service) => service.stop()))
    await bouncer?.stop()
    await database?.drop()
  })

  it('stores traces once, summarised, and serves them, on four shared server connections', async () => {
    const provider = otlpTracerProvider({ url: `${ingest.url}/v1/traces`, apiKey: projectKey, encoding: 'protobuf', serviceName: 'through-pgbouncer' })
    const tracer = provider.getTracer('e2e')
    const traceIds: string[] = []
    for (let i = 0; i < 200; i++) {
      const span = tracer.startSpan(`call ${i}`, { attributes: { 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 5 } })
      traceIds.push(span.spanContext().traceId)
      span.end()
      // The exporter sends each span as it ends, at most 30 at once.
      if (i % 20 === 19) await provider.forceFlush()
    }
    await provider.shutdown()
    // Every trace in the trace list: stored by one of the writers and folded into its summary.
    const listed = await eventually(async () => {
      const response = await callJson<{ traces: Array<{ traceId: string; inputTokens: number | null }> }>(`${controlPlane.url}/api/traces?limit=500`, { headers: { 'x-api-key': projectKey } })
      return response.status === 200 && response.body.traces.length === traceIds.length ? response.body.traces : undefined
    }, 60_000, 'the 200 traces in the list')
    assert.deepEqual(new Set(listed.map((trace) => trace.traceId)), new Set(traceIds))
    assert.ok(listed.every((trace) => trace.inputTokens === 10))
    const [stored] = await database.db.selectFrom('spans').select((eb) => eb.fn.countAll<string>().as('spans')).execute()
    assert.equal(Number(stored?.spans), 200, 'each span stored once')
    assert.ok((await bouncer.serverConnections()) <= POOL_SIZE, 'no more server connections than the pool')
  })

  it('runs the janitor again and again: its lock never outlives a run on a server connection', async () => {
    const policy = await callJson(`${controlPlane.url}/api/projects/${projectId}/retention`, { method: 'PUT', headers: { 'x-api-key': teamKey }, body: { enabled: true, retentionDays: 7 } })
    assert.equal(policy.status, 200)
    for (let run = 0; run < 5; run++) {
      const answer = await callJson<{ success: boolean }>(`${janitor.url}/api/cron/cleanup-traces`, { headers: { 'cron-api-key': cronKey } })
      assert.equal(answer.status, 200, `run ${run}: ${JSON.stringify(answer.body)}`)
      assert.equal(answer.body.success, true)
    }
  })
})
