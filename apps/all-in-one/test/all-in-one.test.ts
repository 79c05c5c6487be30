import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { AllInOneConfigSchema, loadConfig, testEnvironment } from '@tracewell/config'
import { createTestDatabase } from '@tracewell/db/testing'
import { decodeProtobufTraces } from '@tracewell/otlp'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { buildAllInOneApp } from '../src/index.ts'

const fixtures = new URL('../../../test-fixtures/', import.meta.url)
const otlpJson = readFileSync(new URL('otel-js-otlp-json-1.json', fixtures))
const otlpProto = readFileSync(new URL('otel-js-otlp-proto-1.bin', fixtures))
const requests = JSON.parse(readFileSync(new URL('requests.json', fixtures), 'utf8')) as {
  traces: Record<'otlpJson' | 'otlpProto', { traceId: string; spanIds: string[] }>
}

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('npm start on embedded defaults (PGlite, in-process queue)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-all-in-one-'))
  after(() => rmSync(dataDir, { recursive: true, force: true }))
  const config = loadConfig(AllInOneConfigSchema, { DATA_DIR: dataDir, LOG_LEVEL: 'silent', CRON_API_KEY: 'cron-secret-0123456789abcdef0123456789' })

  it('creates a default workspace once, stores traces before answering, and keeps them across restarts', async () => {
    const first = await buildAllInOneApp(config)
    const workspace = first.firstStart
    assert.ok(workspace, 'the first start creates the default team and project')
    assert.match(workspace.projectApiKey, /^tw_proj_/)
    assert.match(workspace.teamApiKey, /^tw_team_/)

    const sent = await first.app.inject({
      method: 'POST',
      url: '/api/trace',
      headers: { 'x-api-key': workspace.projectApiKey, 'content-type': 'application/json' },
      payload: otlpJson,
    })
    assert.equal(sent.statusCode, 200)
    assert.deepEqual(sent.json(), { status: 200, message: 'Traces received successfully' })

    // The in-process queue answers only after the writer stored the spans: no waiting needed.
    const trace = await first.app.inject({ url: `/api/traces/${requests.traces.otlpJson.traceId}`, headers: { 'x-api-key': workspace.projectApiKey } })
    assert.equal(trace.statusCode, 200)
    assert.equal(trace.json().spans.length, 1)

    const cleanup = await first.app.inject({ url: '/api/cron/cleanup-traces', headers: { 'cron-api-key': 'cron-secret-0123456789abcdef0123456789' } })
    assert.equal(cleanup.statusCode, 200)
    assert.equal(cleanup.json().success, true)
    await first.app.close()

    const second = await buildAllInOneApp(config)
    assert.equal(second.firstStart, null, 'keys are printed on the first start only')
    const again = await second.app.inject({ url: `/api/traces/${requests.traces.otlpJson.traceId}`, headers: { 'x-api-key': workspace.projectApiKey } })
    assert.equal(again.statusCode, 200, 'data and keys survive a restart')
    const health = await second.app.inject({ url: '/readyz' })
    const ready = health.json()
    assert.match(ready.details.cleanup.nextRunAt, /T03:00:00\.000Z$/, 'RETENTION_SCHEDULE defaults to daily at 03:00 UTC')
    assert.deepEqual({ ...ready, details: { ...ready.details, cleanup: { ...ready.details.cleanup, nextRunAt: 'x' } } }, {
      status: 'ok',
      checks: { postgres: 'ok', queue: 'ok', evaluations: 'ok' },
      details: { summaries: { deltas: 0, traces: 0, lagSeconds: 0 }, cleanup: { endpoint: 'cron-api-key', schedule: '0 3 * * *', nextRunAt: 'x' } },
    })
    await second.app.close()
  })
})

describe('npm start: a project’s ingest rate limit on PGlite, its buckets in memory', { timeout: 60_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-all-in-one-limit-'))
  after(() => rmSync(dataDir, { recursive: true, force: true }))

  it('set with the team key, refuses the project over it with 429 and the RateLimit fields', async () => {
    const config = loadConfig(AllInOneConfigSchema, { DATA_DIR: dataDir, LOG_LEVEL: 'silent', INGEST_RATE_LIMIT_REFRESH_MS: '100' })
    const { app, firstStart } = await buildAllInOneApp(config)
    try {
      assert.ok(firstStart)
      const put = await app.inject({
        method: 'PUT',
        url: `/api/projects/${firstStart.projectId}/ingest-limit`,
        headers: { 'x-api-key': firstStart.teamApiKey },
        payload: { spansPerSecond: 1, burst: 1 },
      })
      assert.equal(put.statusCode, 200, put.body)
      await new Promise((resolve) => setTimeout(resolve, 400))
      const send = () => app.inject({ method: 'POST', url: '/v1/traces', headers: { 'x-api-key': firstStart.projectApiKey, 'content-type': 'application/json' }, payload: otlpJson })
      const first = await send()
      assert.equal(first.statusCode, 200, first.body)
      assert.equal(first.headers['ratelimit-limit'], '1')
      const refused = await send()
      assert.equal(refused.statusCode, 429, refused.body)
      assert.equal(refused.headers['retry-after'], '1')
      assert.equal(refused.headers['ratelimit-remaining'], '0')
    } finally {
      await app.close()
    }
  })
})

describe('npm start with DATABASE_URL and REDIS_URL (Postgres, BullMQ)', () => {
  it('runs the same routes over the real queue and writer', async () => {
    const database = await createTestDatabase()
    const { REDIS_URL } = testEnvironment()
    const config = loadConfig(AllInOneConfigSchema, {
      DATABASE_URL: database.url,
      REDIS_URL,
      QUEUE_PREFIX: testQueuePrefix(),
      LOG_LEVEL: 'silent',
      INIT_TEAM_NAME: 'ops',
      INIT_TEAM_API_KEY: 'team-key-0123456789abcdef0123456789abcdef',
      INIT_PROJECT_NAME: 'checkout',
      INIT_PROJECT_ID: 'checkout',
      INIT_PROJECT_API_KEY: 'proj-key-0123456789abcdef0123456789abcdef',
    })
    const { app, firstStart } = await buildAllInOneApp(config, { db: database.db })
    try {
      assert.equal(firstStart, null, 'INIT_* settings replace the default workspace')
      const sent = await app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { 'x-api-key': config.INIT_PROJECT_API_KEY!, 'content-type': 'application/x-protobuf' },
        payload: otlpProto,
      })
      assert.equal(sent.statusCode, 200)
      assert.equal(sent.headers['content-type'], 'application/x-protobuf')
      const spans = await waitFor(async () => {
        const response = await app.inject({ url: `/api/traces/${requests.traces.otlpProto.traceId}`, headers: { 'x-api-key': config.INIT_PROJECT_API_KEY! } })
        return response.statusCode === 200 ? (response.json().spans as Array<{ spanId: string }>) : undefined
      })
      const expected = decodeProtobufTraces(otlpProto).spans.map((span) => span.spanId).sort()
      assert.deepEqual(spans.map((span) => span.spanId).sort(), expected)
      const keys = await app.inject({ method: 'POST', url: '/api/api-key?project_id=checkout', headers: { 'x-api-key': config.INIT_TEAM_API_KEY!, 'content-type': 'application/json' } })
      assert.equal(keys.statusCode, 200)
      assert.match(keys.json().apiKey, /^tw_proj_/)
    } finally {
      await app.close()
      await database.drop()
    }
  })
})
