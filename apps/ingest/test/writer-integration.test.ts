import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { countSpans, findTraceSpans, type SpanDto } from '@tracewell/db'
import { decodeJsonTraces, decodeProtobufTraces, type SpanRecord } from '@tracewell/otlp'
import { startSpanBatchWorker, type SpanBatchWorker } from '@tracewell/writer'
import { clientBodies, encodings, type ExpectedSpan } from './support/fixtures.ts'
import { startIngest, testEnv, type IngestHarness } from './support/ingest-harness.ts'

// The whole path of a trace: inject() → Redis (real BullMQ) → the writer's worker → Postgres rows,
// every column as the client sent it, and a resent batch making no second row.

const silent = { info() {}, warn() {}, error() {} }
let ingest: IngestHarness
let writer: SpanBatchWorker

before(async () => {
  ingest = await startIngest()
  writer = startSpanBatchWorker({ db: ingest.database.db, redis: testEnv.REDIS_URL, prefix: ingest.prefix, concurrency: 2, logger: silent })
})
after(async () => {
  await writer.close()
  await ingest.close()
})

const distinctSpans = new Set(clientBodies.flatMap((body) => body.spans.map((span) => `${span.traceId}/${span.spanId}`))).size

async function postAll(encoding: keyof typeof encodings, url: string): Promise<void> {
  for (const fixture of clientBodies) {
    const response = await ingest.app.inject({
      method: 'POST',
      url,
      headers: { 'x-api-key': ingest.tenant.projectKey, 'content-type': fixture.contentType, ...(encoding === 'identity' ? {} : { 'content-encoding': encoding }) },
      payload: encodings[encoding](fixture.body),
    })
    assert.equal(response.statusCode, 200, `${fixture.name}: ${response.body}`)
  }
}

async function drained(): Promise<void> {
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    const counts = await ingest.queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'failed')
    if (Object.values(counts).every((count) => count === 0)) return
    assert.equal(counts.failed, 0, 'no job failed')
    await sleep(25)
  }
  assert.fail('the writer did not drain the queue within 10 s')
}

/** What a stored span must be: the decoded record, at the microsecond precision of timestamptz. */
function assertStored(row: SpanDto, record: SpanRecord, expected: ExpectedSpan): void {
  const micros = (nanos: string) => `${nanos.slice(0, -3)}000`
  assert.equal(row.traceId, expected.traceId)
  assert.equal(row.spanId, expected.spanId)
  assert.match(row.traceId, /^[0-9a-f]{32}$/)
  assert.match(row.spanId, /^[0-9a-f]{16}$/)
  assert.equal(row.parentSpanId, record.parentSpanId)
  assert.equal(row.name, record.name)
  assert.equal(row.kind, record.kind)
  assert.equal(row.startTimeUnixNano, micros(record.startTimeUnixNano))
  assert.equal(row.endTimeUnixNano, micros(record.endTimeUnixNano))
  assert.equal(row.durationNs, record.durationNs)
  assert.equal(row.traceState, record.traceState)
  assert.deepEqual(row.status, { code: record.statusCode, message: record.statusMessage })
  assert.equal(row.serviceName, expected.serviceName)
  assert.equal(row.serviceVersion, record.serviceVersion)
  assert.equal(row.scopeName, record.scopeName)
  assert.equal(row.scopeVersion, record.scopeVersion)
  assert.equal(row.llmVendor, expected.llmVendor)
  assert.equal(row.llmModel, expected.llmModel)
  assert.equal(row.llmRequestType, record.llmRequestType)
  assert.equal(row.inputTokens, expected.inputTokens)
  assert.equal(row.outputTokens, expected.outputTokens)
  assert.equal(row.totalTokens, record.totalTokens)
  assert.deepEqual(row.attributes, JSON.parse(JSON.stringify(record.attributes)))
  assert.deepEqual(row.resourceAttributes, JSON.parse(JSON.stringify(record.resourceAttributes)))
  assert.deepEqual(row.events, JSON.parse(JSON.stringify(record.events)))
  assert.deepEqual(row.links, JSON.parse(JSON.stringify(record.links)))
  const messages = row.attributes['llm.request.messages'] as { stringValue: string } | undefined
  // The prompt comes back exactly as sent, byte for byte.
  if (expected.messages === null) assert.equal(messages, undefined)
  else assert.equal(Buffer.compare(Buffer.from(messages?.stringValue ?? ''), Buffer.from(expected.messages)), 0)
}

it('every client body reaches Postgres with every column right', async () => {
  await postAll('gzip', '/api/trace')
  await drained()
  assert.equal(await countSpans(ingest.database.db, ingest.tenant.projectId), distinctSpans)
  for (const fixture of clientBodies) {
    const decoded = fixture.contentType === 'application/json' ? decodeJsonTraces(JSON.parse(fixture.body.toString('utf8'))) : decodeProtobufTraces(fixture.body)
    for (const expected of fixture.spans) {
      const rows = await findTraceSpans(ingest.database.db, ingest.tenant.projectId, expected.traceId)
      const row = rows.find((candidate) => candidate.spanId === expected.spanId)
      assert.ok(row, `${fixture.name}: span ${expected.spanId} stored`)
      const record = decoded.spans.find((span) => span.spanId === expected.spanId) as SpanRecord
      assertStored(row, record, expected)
    }
  }
})

it('resent batches, on either path and in any encoding, make no second row', async () => {
  await postAll('identity', '/api/trace')
  await postAll('deflate', '/v1/traces')
  await drained()
  assert.equal(await countSpans(ingest.database.db, ingest.tenant.projectId), distinctSpans)
})

it('characters Postgres cannot store (U+0000, lone surrogates) arrive as U+FFFD instead of failing the queue job', async () => {
  const traceId = 'ab'.repeat(16)
  const body = JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'nul\u0000service' } }] },
        scopeSpans: [
          {
            spans: [
              {
                traceId,
                spanId: 'cd'.repeat(8),
                name: 'chat\u0000completion',
                kind: 3,
                startTimeUnixNano: '1700000000000000000',
                endTimeUnixNano: '1700000001000000000',
                attributes: [
                  { key: 'llm.response.choices', value: { stringValue: 'a\u0000b \ud800 c' } },
                  { key: 'key\u0000with nul', value: { stringValue: 'literal \\u0000 stays' } },
                ],
              },
            ],
          },
        ],
      },
    ],
  })
  const response = await ingest.app.inject({
    method: 'POST',
    url: '/api/trace',
    headers: { 'x-api-key': ingest.tenant.projectKey, 'content-type': 'application/json' },
    payload: body,
  })
  assert.equal(response.statusCode, 200)
  await drained()
  const [row] = await findTraceSpans(ingest.database.db, ingest.tenant.projectId, traceId)
  assert.equal(row?.name, 'chat\ufffdcompletion')
  assert.equal(row?.serviceName, 'nul\ufffdservice')
  assert.deepEqual(row?.attributes, {
    'llm.response.choices': { stringValue: 'a\ufffdb \ufffd c' },
    'key\ufffdwith nul': { stringValue: 'literal \\u0000 stays' },
  })
})

it('stores an intValue sent as a JSON number past 2^53 exactly (9007199254740993 stays …993)', async () => {
  const traceId = '2'.repeat(32)
  const body = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${traceId}","spanId":"${'3'.repeat(16)}","name":"big ints",
    "startTimeUnixNano":1700000000000000001,"endTimeUnixNano":"1700000001000000000",
    "attributes":[{"key":"exact","value":{"intValue":9007199254740993}},{"key":"max","value":{"intValue":9223372036854775807}},{"key":"small","value":{"intValue":42}}]}]}]}]}`
  const response = await ingest.app.inject({
    method: 'POST',
    url: '/v1/traces',
    headers: { 'x-api-key': ingest.tenant.projectKey, 'content-type': 'application/json' },
    payload: body,
  })
  assert.equal(response.statusCode, 200, response.body)
  await drained()
  const [row] = await findTraceSpans(ingest.database.db, ingest.tenant.projectId, traceId)
  assert.deepEqual(row?.attributes, { exact: { intValue: '9007199254740993' }, max: { intValue: '9223372036854775807' }, small: { intValue: '42' } })
})
