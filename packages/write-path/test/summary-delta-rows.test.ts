import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pendingDeltasName, sql, type Db, type ErasureDto, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeSpans, summariseAll, summaryMismatches } from '../src/index.ts'
import { traceDeltaOf } from '../src/trace-delta-layout.ts'

// The summary_deltas row as the writer writes it (trace-delta-layout.ts, trace-deltas.ts): each
// trace's delta an array of its values, one delta a trace of each source; rows of the writer
// before (named fields) still folded and still seen by an erasure.

const second = 1_000_000_000n
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z

function span(projectId: string, traceId: string, index: number, fields: Partial<SpanInsert> = {}): SpanInsert {
  const start = t0 + BigInt(index) * second
  return {
    projectId, traceId, spanId: `${(index + 1).toString(16).padStart(16, '0')}`, parentSpanId: index === 0 ? null : '0000000000000001',
    name: `op ${index}`, kind: 1, startTimeUnixNano: String(start), endTimeUnixNano: String(start + 2n * second), durationNs: String(2n * second),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'api', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: 'openai', llmModel: 'gpt-4o', llmRequestType: 'chat', inputTokens: 10 + index, outputTokens: 5, totalTokens: null, totalCostUsd: 0.1,
    sessionId: 'session-1', userId: 'user-1', attributes: { 'gen_ai.prompt': { stringValue: `word${index}` } }, resourceAttributes: {}, events: [], links: [],
    ...fields,
  }
}

const deltaEntries = async (db: Db): Promise<unknown[]> => {
  const { rows } = await sql<{ traces: string }>`select traces from summary_deltas order by id`.execute(db)
  return rows.flatMap((row) => JSON.parse(row.traces) as unknown[])
}

const summariesOf = async (db: Db, projectId: string) =>
  (await sql<Record<string, unknown>>`
    select trace_id, name, has_root, span_count, error_count, models, vendors, services, input_tokens::text, output_tokens::text, total_tokens::text,
      cost_usd::text, session_id, user_id, start_time, end_time, text_filter::text
    from trace_summaries where project_id = ${projectId} order by trace_id`.execute(db)).rows

for (const engine of engines) {
  describe(`summary delta rows on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it("writes a delta a trace of each source, as an array of its values, and folds a trace split over two sources exactly", async () => {
      const trace = 'a'.repeat(32)
      const other = 'b'.repeat(32)
      const first = [span('split', trace, 0), span('split', other, 0)]
      const second = [span('split', trace, 1, { statusCode: 2 }), span('split', trace, 2, { llmModel: 'gpt-4o-mini' })]
      await storeSpans(db, [
        { projectId: 'split', spans: () => first },
        { projectId: 'split', spans: () => second },
      ])
      const entries = await deltaEntries(db)
      assert.ok(entries.every((entry) => Array.isArray(entry)), 'each delta an array')
      assert.deepEqual(entries.map((entry) => traceDeltaOf(entry).trace_id).sort(), [trace, trace, other], "the split trace's delta of each source")
      await summariseAll(db)
      assert.deepEqual(await summaryMismatches(db, 'split'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      const [summary] = (await summariesOf(db, 'split')).filter((row) => row.trace_id === trace)
      assert.equal(summary?.span_count, 3)
      assert.equal(summary?.error_count, 1)
      assert.deepEqual(summary?.models, ['gpt-4o', 'gpt-4o-mini'])
      assert.equal(summary?.input_tokens, '33')
    })

    it('folds a row of the writer before (named fields) as it folds its own', async () => {
      const spans = (projectId: string) => [span(projectId, 'c'.repeat(32), 0), span(projectId, 'c'.repeat(32), 1), span(projectId, 'd'.repeat(32), 3)]
      await summariseAll(db)
      await storeSpans(db, spans('named'))
      const { rows } = await sql<{ id: string; traces: string }>`select id::text as id, traces from summary_deltas`.execute(db)
      for (const row of rows) {
        const named = (JSON.parse(row.traces) as unknown[]).map((entry) => traceDeltaOf(entry))
        await sql`update summary_deltas set traces = ${JSON.stringify(named)} where id = ${row.id}::bigint`.execute(db)
      }
      assert.ok((await deltaEntries(db)).every((entry) => !Array.isArray(entry)))
      await summariseAll(db)
      await storeSpans(db, spans('positional'))
      await summariseAll(db)
      assert.deepEqual(await summaryMismatches(db, 'named'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      assert.deepEqual(await summariesOf(db, 'named'), await summariesOf(db, 'positional'))
    })

    it("finds a trace, a user and a session not yet folded in either form of row, for an erasure", async () => {
      await summariseAll(db)
      await storeSpans(db, [span('pending', 'e'.repeat(32), 0, { userId: 'erased-user', sessionId: 'erased-session' })])
      const erasure = (fields: Partial<ErasureDto>) => ({ projectId: 'pending', userId: null, sessionId: null, ...fields }) as ErasureDto
      const seen = async () => [
        await pendingDeltasName(db, erasure({}), ['e'.repeat(32)]),
        await pendingDeltasName(db, erasure({ userId: 'erased-user' }), []),
        await pendingDeltasName(db, erasure({ sessionId: 'erased-session' }), []),
        await pendingDeltasName(db, erasure({ userId: 'someone-else' }), ['f'.repeat(32)]),
        await pendingDeltasName(db, { ...erasure({ userId: 'erased-user' }), projectId: 'another' }, ['e'.repeat(32)]),
      ]
      assert.deepEqual(await seen(), [true, true, true, false, false])
      await sql`update summary_deltas set traces = (select json_agg(json_build_object('project_id', e->>0, 'trace_id', e->>1, 'session_id', e->>18, 'user_id', e->>19)) from json_array_elements(traces::json) e)`.execute(db)
      assert.deepEqual(await seen(), [true, true, true, false, false])
      await sql`delete from summary_deltas`.execute(db)
    })
  })
}
