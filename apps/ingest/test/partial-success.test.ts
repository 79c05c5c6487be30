import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { findTraceSpans } from '@tracewell/db'
import { startSpanBatchWorker, type SpanBatchWorker } from '@tracewell/writer'
import { StatusMessage } from '../src/otlp/otlp-status.ts'
import { decodeExportResponse } from '../src/otlp/partial-success.ts'
import { startIngest, testEnv, type IngestHarness } from './support/ingest-harness.ts'
import { jsonProblem, nextTraceId, otlpJson, otlpProtobuf, protobufProblem, traceSpans } from './support/otlp-bodies.ts'

// OTLP's partial success: a request with some invalid spans stores the valid ones and says how
// many it refused and why, in the encoding of the request; only a request with no valid span is a
// 400. The writer stores exactly the spans ingest accepted.

const silent = { info() {}, warn() {}, error() {} }
let ingest: IngestHarness
let writer: SpanBatchWorker

before(async () => {
  ingest = await startIngest()
  writer = startSpanBatchWorker({ db: ingest.database.db, redis: testEnv.REDIS_URL, prefix: ingest.prefix, concurrency: 1, logger: silent })
})
after(async () => {
  await writer.close()
  await ingest.close()
})

function post(url: string, contentType: string, payload: string | Buffer) {
  return ingest.app.inject({ method: 'POST', url, headers: { 'x-api-key': ingest.tenant.projectKey, 'content-type': contentType }, payload })
}

/** The names of the trace's stored spans, once the writer has stored `count` of them. */
async function storedNames(traceId: string, count: number): Promise<string[]> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const rows = await findTraceSpans(ingest.database.db, ingest.tenant.projectId, traceId)
    if (rows.length >= count || Date.now() > deadline) return rows.map((row) => row.name).sort()
    await sleep(50)
  }
}

describe('partial success', () => {
  it('OTLP JSON on /v1/traces: stores the valid spans and answers 200 with partialSuccess', async () => {
    const traceId = nextTraceId()
    const response = await post('/v1/traces', 'application/json', otlpJson(traceSpans(traceId, 5, [1, 3])))
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), {
      partialSuccess: { rejectedSpans: '2', errorMessage: `2 of 5 spans rejected: ${jsonProblem(1)}; ${jsonProblem(3)}` },
    })
    assert.deepEqual(await storedNames(traceId, 3), ['step 0', 'step 2', 'step 4'])
    // Nothing more arrives: the writer kept exactly what ingest accepted.
    await sleep(200)
    assert.equal((await findTraceSpans(ingest.database.db, ingest.tenant.projectId, traceId)).length, 3)
  })

  it('on /api/trace: the Langtrace answer with the counts added', async () => {
    const traceId = nextTraceId()
    const response = await post('/api/trace', 'application/json', otlpJson(traceSpans(traceId, 3, [0])))
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), {
      status: 200,
      message: 'Traces received successfully',
      rejectedSpans: 1,
      errorMessage: `1 of 3 spans rejected: ${jsonProblem(0)}`,
    })
    assert.deepEqual(await storedNames(traceId, 2), ['step 1', 'step 2'])
  })

  for (const url of ['/v1/traces', '/api/trace']) {
    it(`protobuf on ${url}: an ExportTraceServiceResponse with partial_success`, async () => {
      const traceId = nextTraceId()
      const response = await post(url, 'application/x-protobuf', otlpProtobuf(traceSpans(traceId, 4, [2])))
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['content-type'], 'application/x-protobuf')
      assert.deepEqual(decodeExportResponse(response.rawPayload), {
        partialSuccess: { rejectedSpans: 1, errorMessage: `1 of 4 spans rejected: ${protobufProblem(2)}` },
      })
      assert.deepEqual(await storedNames(traceId, 3), ['step 0', 'step 1', 'step 3'])
    })
  }

  it('names the first five problems and counts the rest', async () => {
    const traceId = nextTraceId()
    const response = await post('/v1/traces', 'application/json', otlpJson(traceSpans(traceId, 9, [0, 1, 2, 3, 4, 5, 6, 7])))
    assert.equal(response.statusCode, 200)
    const expected = `8 of 9 spans rejected: ${[0, 1, 2, 3, 4].map(jsonProblem).join('; ')}; and 3 more`
    assert.deepEqual(response.json(), { partialSuccess: { rejectedSpans: '8', errorMessage: expected } })
    assert.deepEqual(await storedNames(traceId, 1), ['step 8'])
  })

  it('answers 400 with the first problem when no span is valid, in the encoding of the request', async () => {
    const json = await post('/v1/traces', 'application/json', otlpJson(traceSpans(nextTraceId(), 2, [0, 1])))
    assert.equal(json.statusCode, 400)
    assert.deepEqual(json.json(), { code: 3, message: jsonProblem(0) })
    const langtrace = await post('/api/trace', 'application/json', otlpJson(traceSpans(nextTraceId(), 2, [0, 1])))
    assert.equal(langtrace.statusCode, 400)
    assert.deepEqual(langtrace.json(), { status: 400, message: jsonProblem(0) })
    const proto = await post('/api/trace', 'application/x-protobuf', otlpProtobuf(traceSpans(nextTraceId(), 1, [0])))
    assert.equal(proto.statusCode, 400)
    assert.equal(proto.headers['content-type'], 'application/x-protobuf')
    assert.deepEqual(StatusMessage.toObject(StatusMessage.decode(proto.rawPayload)), { code: 3, message: protobufProblem(0) })
  })

  it('counts the refused spans in tracewell_ingest_spans_rejected_total', async () => {
    const metrics = await ingest.app.inject('/metrics')
    // 2 + 1 + 1 + 1 + 8 refused in the requests above that were accepted.
    assert.match(metrics.body, /^tracewell_ingest_spans_rejected_total 13$/m)
  })
})
