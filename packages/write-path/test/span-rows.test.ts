import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { findTraceSpans, nanosToIsoMicros, type Db } from '@tracewell/db'
import { insertSpanRows, spanRowsJson } from '../src/span-statement.ts'
import { engines } from '@tracewell/db/testing'
import { storeByStatement } from './support/store-and-summarise.ts'
import { spanGenerator, storable, type SpanFields } from './support/random-spans.ts'

// The row object the insert parameter was built from before spanRowsJson existed (its columns in
// today's order, spanColumns), written out independently so the serialiser is checked against it, not against itself.
function referenceRow(projectId: string, span: SpanFields) {
  return {
    project_id: projectId, trace_id: span.traceId, span_id: span.spanId, parent_span_id: span.parentSpanId, name: span.name,
    kind: span.kind, start_time: nanosToIsoMicros(span.startTimeUnixNano), end_time: nanosToIsoMicros(span.endTimeUnixNano),
    duration_ns: span.durationNs, trace_state: span.traceState, status_code: span.statusCode, status_message: span.statusMessage,
    service_name: span.serviceName, service_version: span.serviceVersion, scope_name: span.scopeName, scope_version: span.scopeVersion,
    llm_vendor: span.llmVendor, llm_model: span.llmModel, llm_response_model: span.llmResponseModel, llm_request_type: span.llmRequestType,
    input_tokens: span.inputTokens, output_tokens: span.outputTokens, total_tokens: span.totalTokens,
    cached_input_tokens: span.cachedInputTokens, cache_write_input_tokens: span.cacheWriteInputTokens, reasoning_tokens: span.reasoningTokens,
    tokens_estimated: span.tokensEstimated ?? false, session_id: span.sessionId, user_id: span.userId, input_cost_usd: span.inputCostUsd,
    output_cost_usd: span.outputCostUsd, total_cost_usd: span.totalCostUsd, cost_source: span.costSource, attributes: span.attributes,
    resource_attributes: span.resourceAttributes, events: span.events, links: span.links,
  }
}
const referenceRows = (projectId: string, spans: SpanFields[]) => JSON.stringify(spans.map((span) => referenceRow(projectId, span)))

const { pick, randomSpan } = spanGenerator(42)

describe('spanRowsJson', () => {
  it('is exactly the JSON.stringify of the row objects, without the brackets', () => {
    for (let round = 0; round < 200; round++) {
      const spans = Array.from({ length: 1 + (round % 5) }, () => randomSpan(false))
      const projectId = pick(['proj', 'p"q', 'Zoë\\\n'])
      assert.equal(`[${spanRowsJson(projectId, spans)}]`, referenceRows(projectId, spans))
    }
  })

  it('writes U+0000 and lone surrogates, which Postgres cannot store, as U+FFFD', () => {
    for (let round = 0; round < 200; round++) {
      const spans = Array.from({ length: 1 + (round % 5) }, () => randomSpan(true))
      const projectId = pick(['proj', 'p\0q', 'Zoë\ud800'])
      const rows = `[${spanRowsJson(projectId, spans)}]`
      assert.doesNotMatch(rows, /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f])/i, 'no escape Postgres refuses')
      assert.deepEqual(JSON.parse(rows), JSON.parse(referenceRows(storable(projectId), spans.map(storable))))
    }
  })

  it('makes chunks that join with "," into the JSON of all their rows', () => {
    const a = Array.from({ length: 3 }, () => randomSpan(false))
    const b = Array.from({ length: 2 }, () => randomSpan(false))
    const joined = `[${[spanRowsJson('a', a), spanRowsJson('b', b)].join(',')}]`
    assert.equal(joined, `[${referenceRows('a', a).slice(1, -1)},${referenceRows('b', b).slice(1, -1)}]`)
    assert.deepEqual(JSON.parse(joined), [...a.map((span) => referenceRow('a', span)), ...b.map((span) => referenceRow('b', span))])
    assert.equal(spanRowsJson('a', []), '')
  })
})

for (const engine of engines) {
  describe(`insertSpanRows on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('stores every field of awkward text exactly as the statement path does, idempotently', async () => {
      const spans = Array.from({ length: 40 }, () => randomSpan(true))
      const half = spans.slice(0, 20)
      assert.equal((await insertSpanRows(db, [spanRowsJson('serialized', half.slice(0, 7)), spanRowsJson('serialized', half.slice(7))])).size, 20)
      assert.equal((await insertSpanRows(db, [spanRowsJson('serialized', spans)])).size, 20, 'the first 20 were already stored')
      assert.equal((await insertSpanRows(db, ['', ''])).size, 0)
      assert.equal(await storeByStatement(db, spans.map((span) => ({ ...span, projectId: 'records' }))), 40)
      for (const span of spans) {
        const [viaRows] = await findTraceSpans(db, 'serialized', span.traceId)
        const [viaRecords] = await findTraceSpans(db, 'records', span.traceId)
        assert.ok(viaRows && viaRecords)
        assert.deepEqual({ ...viaRows, receivedAt: '' }, { ...viaRecords, receivedAt: '' })
        assert.equal(viaRows.name, storable(span.name))
        assert.deepEqual(viaRows.attributes, storable(span.attributes))
        assert.deepEqual(viaRows.events, storable(span.events))
      }
    })

    it('rejects malformed row text with a data exception', async () => {
      await assert.rejects(insertSpanRows(db, ['{"project_id":"x",']), (error: { code?: string }) => /^22/.test(error.code ?? ''))
    })
  })
}
