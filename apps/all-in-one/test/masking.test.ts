import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client, credentials, Metadata } from '@grpc/grpc-js'
import { AllInOneConfigSchema, loadConfig, testEnvironment } from '@tracewell/config'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { sql } from 'kysely'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { buildAllInOneApp } from '../src/index.ts'
import { bodyForms, leaks, maskingRules, otlpJsonBody, otlpProtobufBody, secrets, type SpanIds } from './support/masking-bodies.ts'

// Masking at ingest, end to end: every body form and OTLP/gRPC, through the queue and the writer
// into Postgres, then read back, searched, and the stored rows scanned for what was masked. A
// second project without rules gets the same spans, so that each check is shown able to fail.

const teamKey = 'team-key-0123456789abcdef0123456789abcdef'
const projectKey = 'proj-key-0123456789abcdef0123456789abcdef'
const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export'

const newIds = (): SpanIds => ({ traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), linkedSpanId: randomBytes(8).toString('hex') })

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await sleep(100)
  }
}

function exportOverGrpc(port: number, key: string, body: Buffer): Promise<void> {
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure())
  const metadata = new Metadata()
  metadata.set('x-api-key', key)
  return new Promise<void>((resolve, reject) => {
    client.makeUnaryRequest(EXPORT_PATH, (bytes: Buffer) => bytes, (bytes: Buffer) => bytes, body, metadata, (error) => (error ? reject(error) : resolve()))
  }).finally(() => client.close())
}

const modes = [
  { name: 'BullMQ on Redis and the writer', redis: true },
  { name: 'npm start’s in-process queue', redis: false },
]

for (const mode of modes) {
  describe(`masking at ingest, ${mode.name}`, { timeout: 120_000 }, () => {
    let database: TestDatabase
    let app: App
    let grpcPort: number
    let controlKey: string
    const sent = new Map<string, SpanIds>()

    before(async () => {
      database = await createTestDatabase()
      const config = loadConfig(AllInOneConfigSchema, {
        DATABASE_URL: database.url,
        ...(mode.redis ? { REDIS_URL: testEnvironment().REDIS_URL, QUEUE_PREFIX: testQueuePrefix('masking') } : {}),
        LOG_LEVEL: 'silent',
        KEY_CACHE_TTL_MS: '200',
        INIT_TEAM_NAME: 'ops',
        INIT_TEAM_API_KEY: teamKey,
        INIT_PROJECT_NAME: 'masked',
        INIT_PROJECT_ID: 'masked',
        INIT_PROJECT_API_KEY: projectKey,
      })
      ;({ app } = await buildAllInOneApp(config, { db: database.db }))
      grpcPort = await app.otlpGrpc.listen({ host: '127.0.0.1', port: 0 })
      const put = await app.inject({ method: 'PUT', url: '/api/projects/masked/masking', headers: { 'x-api-key': teamKey }, payload: { rules: maskingRules } })
      assert.equal(put.statusCode, 200, put.body)
      const control = await app.inject({ method: 'POST', url: '/api/projects', headers: { 'x-api-key': teamKey }, payload: { name: 'unmasked' } })
      assert.equal(control.statusCode, 201, control.body)
      const key = await app.inject({ method: 'POST', url: `/api/api-key?project_id=${control.json().id}`, headers: { 'x-api-key': teamKey } })
      controlKey = key.json().apiKey
      // The rules were stored after ingest's first read: wait for its next one (MASKING_RULES_REFRESH_MS, 2 s).
      await sleep(2_500)
    })
    after(async () => {
      await app.close()
      await database.drop()
    })

    const storedTrace = (traceId: string, key = projectKey) =>
      waitFor(async () => {
        const response = await app.inject({ url: `/api/traces/${traceId}`, headers: { 'x-api-key': key } })
        return response.statusCode === 200 && response.json().spans.length > 0 ? (response.json().spans as Array<Record<string, unknown>>) : undefined
      })

    for (const form of bodyForms) {
      it(`${form.name}: stored masked, the JSON in llm.prompts still JSON`, async () => {
        const ids = newIds()
        sent.set(form.name, ids)
        for (const key of [projectKey, controlKey]) {
          const response = await app.inject({
            method: 'POST',
            url: form.url,
            headers: { 'x-api-key': key, 'content-type': form.contentType, ...(form.encoding ? { 'content-encoding': form.encoding } : {}) },
            payload: form.body(ids),
          })
          // The answer is what it always was.
          assert.equal(response.statusCode, 200, response.body)
          if (form.url === '/api/trace') assert.deepEqual(response.json(), { status: 200, message: 'Traces received successfully' })
        }
        const [span] = await storedTrace(ids.traceId)
        assert.ok(span)
        const text = JSON.stringify(span)
        for (const leak of leaks) assert.ok(!text.includes(leak), `${leak} stored: ${text}`)
        assert.equal(span.name, 'ask [REDACTED:email]')
        assert.deepEqual(span.status, { code: 2, message: 'failed for [customer]' })
        assert.equal(span.userId, '[REDACTED:email]')
        assert.equal(span.llmModel, 'gpt-4o')
        assert.equal(span.serviceName, 'masking-e2e')
        const attributes = span.attributes as Record<string, { stringValue?: string; arrayValue?: unknown }>
        assert.deepEqual(JSON.parse(attributes['llm.prompts']?.stringValue ?? ''), [{ role: 'user', content: 'my card is [REDACTED:credit_card], call me on [REDACTED:phone]' }])
        assert.deepEqual(attributes['api.keys']?.arrayValue, { values: [{ stringValue: '[REDACTED:secret]' }, { stringValue: 'not a key' }] })
        assert.deepEqual((span.resourceAttributes as Record<string, unknown>)['host.owner'], { stringValue: '[REDACTED:email]' })
        assert.deepEqual((span.events as Array<{ attributes: unknown }>)[0]?.attributes, { to: { stringValue: '[REDACTED:email]' } })
        assert.deepEqual((span.links as Array<{ attributes: unknown }>)[0]?.attributes, { from: { stringValue: '[customer]' } })
        // The project without rules stored the same span as it came.
        const [unmasked] = await storedTrace(ids.traceId, controlKey)
        assert.equal(unmasked?.name, `ask ${secrets.email}`)
      })
    }

    it('OTLP/gRPC: stored masked', async () => {
      const ids = newIds()
      sent.set('gRPC', ids)
      await exportOverGrpc(grpcPort, projectKey, otlpProtobufBody(ids))
      await exportOverGrpc(grpcPort, controlKey, otlpProtobufBody(ids))
      const [span] = await storedTrace(ids.traceId)
      const text = JSON.stringify(span)
      for (const leak of leaks) assert.ok(!text.includes(leak), `${leak} stored: ${text}`)
      assert.equal(span?.name, 'ask [REDACTED:email]')
    })

    it('a search finds no masked value, and no row of spans or trace summaries holds one', async () => {
      const search = async (key: string, q: string) => {
        const response = await app.inject({ url: `/api/traces?q=${encodeURIComponent(q)}`, headers: { 'x-api-key': key } })
        assert.equal(response.statusCode, 200, response.body)
        return (response.json().traces as Array<{ traceId: string }>).map((trace) => trace.traceId).sort()
      }
      const everyTrace = [...sent.values()].map((ids) => ids.traceId).sort()
      // The control project's summaries are folded by now, and its search finds the values…
      await waitFor(async () => ((await search(controlKey, 'mallory')).length === everyTrace.length ? true : undefined))
      for (const word of ['mallory', 'CUST-90210', 'MaskMe0123456789abcdefghij']) assert.deepEqual(await search(controlKey, word), everyTrace, word)
      // …while the masked project's spans are all there, and none holds them.
      await waitFor(async () => ((await search(projectKey, 'REDACTED')).length === everyTrace.length ? true : undefined))
      for (const word of ['mallory', 'example.org', 'CUST-90210', 'MaskMe0123456789abcdefghij', '7946']) assert.deepEqual(await search(projectKey, word), [], word)

      const leaked = async (table: 'spans' | 'trace_summaries', projectId: string) =>
        (await sql<{ count: number }>`select count(*)::int as count from ${sql.table(table)} as t where t.project_id = ${projectId} and (t::text ~ ${leaks.join('|')})`.execute(database.db)).rows[0]?.count
      const stored = (await sql<{ count: number }>`select count(*)::int as count from spans where project_id = 'masked'`.execute(database.db)).rows[0]?.count
      assert.equal(stored, everyTrace.length)
      assert.equal(await leaked('spans', 'masked'), 0)
      assert.equal(await leaked('trace_summaries', 'masked'), 0)
      const controlProject = (await app.inject({ url: '/api/projects', headers: { 'x-api-key': teamKey } })).json().projects.find((project: { name: string }) => project.name === 'unmasked').id
      assert.equal(await leaked('spans', controlProject), everyTrace.length, 'the scan finds what was not masked')
    })

    it('a change of rules applies within 5 s', async () => {
      const put = await app.inject({ method: 'PUT', url: '/api/projects/masked/masking', headers: { 'x-api-key': teamKey }, payload: { rules: [{ detector: 'regex', pattern: 'ask' }] } })
      assert.equal(put.statusCode, 200, put.body)
      const changed = Date.now()
      const applied = await waitFor(async () => {
        const ids = newIds()
        const response = await app.inject({ method: 'POST', url: '/v1/traces', headers: { 'x-api-key': projectKey, 'content-type': 'application/json' }, payload: otlpJsonBody(ids) })
        assert.equal(response.statusCode, 200)
        const [span] = await storedTrace(ids.traceId)
        return span?.name === `[REDACTED:regex] ${secrets.email}` ? Date.now() : undefined
      }, 10_000)
      assert.ok(applied - changed <= 5_000, `applied after ${applied - changed} ms`)
    })
  })
}
