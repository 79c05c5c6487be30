import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql, type Db, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { summaryMismatches } from '../src/index.ts'
import { storeAndSummarise } from './support/store-and-summarise.ts'

// Token counts no span reported stay unknown (null) in the trace summaries, the session
// summaries and the hourly rollups, however the spans are split into batches; a count is the sum
// of those reported. A trace is marked estimated when any of its spans is. The summariser's rows
// equal the recomputation from spans (summaryMismatches).

const second = 1_000_000_000n
const hour = 3600n * second
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z

function span(trace: string, spanId: string, startNs: bigint, extra: Partial<SpanInsert> = {}): SpanInsert {
  return {
    projectId: 'p', traceId: trace.repeat(32), spanId: spanId.repeat(16), parentSpanId: null, name: 'op', kind: 1,
    startTimeUnixNano: String(startNs), endTimeUnixNano: String(startNs + second), durationNs: String(second),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    attributes: {}, resourceAttributes: {}, events: [], links: [],
    ...extra,
  }
}

for (const engine of engines) {
  describe(`unknown and estimated token counts on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('keeps unknown counts null through every fold, sums the known, and marks estimated traces', async () => {
      // Trace a: no span reports counts (two batches). Trace b: an unknown batch first, then an
      // input count alone, then an estimated call. Trace c: counts of 0, reported.
      await storeAndSummarise(db, [span('a', '1', t0, { sessionId: 's-a' }), span('b', '1', t0 + hour, { sessionId: 's-b', llmModel: 'm' })])
      await storeAndSummarise(db, [span('a', '2', t0 + second, { sessionId: 's-a', llmModel: 'm' }), span('b', '2', t0 + hour + second, { inputTokens: 9 })])
      await storeAndSummarise(db, [
        span('b', '3', t0 + hour + 2n * second, { llmModel: 'm', inputTokens: 3, outputTokens: 4, tokensEstimated: true }),
        span('c', '1', t0 + 2n * hour, { sessionId: 's-c', inputTokens: 0, outputTokens: 0, totalTokens: 0 }),
      ])

      const traces = await sql<{ trace: string; input: string | null; output: string | null; total: string | null; estimated: boolean }>`
        select left(trace_id, 1) as trace, input_tokens as input, output_tokens as output, total_tokens as total, tokens_estimated as estimated
        from trace_summaries where project_id = 'p' order by trace_id`.execute(db)
      assert.deepEqual(traces.rows.map((r) => [r.trace, r.input, r.output, r.total, r.estimated]), [
        ['a', null, null, null, false],
        // 9 + 3 input; output only from the third span; total: 9 (input alone) + 7.
        ['b', '12', '4', '16', true],
        ['c', '0', '0', '0', false],
      ])
      const sessions = await sql<{ session_id: string; total: string | null }>`select session_id, total_tokens as total from session_summaries where project_id = 'p' order by 1`.execute(db)
      assert.deepEqual(sessions.rows.map((r) => [r.session_id, r.total]), [['s-a', null], ['s-b', '16'], ['s-c', '0']])
      const rollups = await sql<{ hour: Date; input: string | null; output: string | null }>`
        select hour, input_tokens as input, output_tokens as output from usage_rollups where project_id = 'p' and dimension = 'all' order by hour`.execute(db)
      assert.deepEqual(rollups.rows.map((r) => [r.hour.toISOString().slice(11, 13), r.input, r.output]), [['00', null, null], ['01', '12', '4'], ['02', '0', '0']])
      assert.deepEqual(await summaryMismatches(db, 'p'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
    })
  })
}
