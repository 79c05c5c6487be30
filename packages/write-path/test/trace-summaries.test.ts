import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { searchTraces, sql, usageOf, type Db, type SpanInsert } from '@tracewell/db'
import { migrations } from '@tracewell/db/migrations'
import { engines } from '@tracewell/db/testing'
import { storeAndSummarise } from './support/store-and-summarise.ts'

const second = 1_000_000_000n
const t0 = 1_767_225_600n * second

function span(traceId: string, spanId: string, startNs: bigint, extra: Partial<SpanInsert> = {}): SpanInsert {
  const endNs = startNs + 2n * second
  return {
    projectId: 'p', traceId, spanId, parentSpanId: 'f'.repeat(16), name: `child-${spanId}`, kind: 1,
    startTimeUnixNano: String(startNs), endTimeUnixNano: String(endNs), durationNs: String(endNs - startNs),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    attributes: {}, resourceAttributes: {}, events: [], links: [],
    ...extra,
  }
}

for (const engine of engines) {
  describe(`trace summaries on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    const summary = async (traceId: string) =>
      (await sql<{ name: string; span_count: number; error_count: number; models: string[]; input_tokens: string; cost_usd: string | null; duration_us: string; session_id: string | null }>`
        select name, span_count, error_count, models, input_tokens, cost_usd, duration_us, session_id from trace_summaries where trace_id = ${traceId}`.execute(db)).rows

    it('folds batches of one trace together, named by its root whenever it arrives', async () => {
      const trace = '1'.repeat(32)
      await storeAndSummarise(db, [span(trace, '0000000000000002', t0 + second, { llmModel: 'gpt-4o', inputTokens: 10, totalCostUsd: 0.5, statusCode: 2 })])
      assert.deepEqual((await summary(trace))[0]?.name, 'child-0000000000000002', 'named by its earliest span until the root arrives')
      await storeAndSummarise(db, [
        span(trace, '0000000000000001', t0, { parentSpanId: null, name: 'root' }),
        span(trace, '0000000000000003', t0 + 5n * second, { llmModel: 'claude', inputTokens: 5, totalCostUsd: 0.25, sessionId: 's' }),
      ])
      assert.deepEqual(await summary(trace), [
        { name: 'root', span_count: 3, error_count: 1, models: ['claude', 'gpt-4o'], input_tokens: '15', cost_usd: '0.75', duration_us: '7000000', session_id: 's' },
      ])
    })

    it('counts a redelivered batch once, including a batch holding stored and new spans', async () => {
      const trace = '2'.repeat(32)
      const first = [span(trace, '0000000000000001', t0, { parentSpanId: null, inputTokens: 1 })]
      await storeAndSummarise(db, first)
      await storeAndSummarise(db, first)
      await storeAndSummarise(db, [...first, span(trace, '0000000000000002', t0, { inputTokens: 2 })])
      const [row] = await summary(trace)
      assert.deepEqual([row?.span_count, row?.input_tokens], [2, '3'])
      const page = await searchTraces(db, { projectId: 'p', limit: 10, sort: 'time', order: 'desc' })
      assert.equal(page.traces.find((t) => t.traceId === trace)?.spanCount, 2)
    })

    it('leaves out of the totals a span that sums the calls beneath it (invoke_agent), but not its model or session', async () => {
      const trace = '3'.repeat(32)
      const call = { projectId: 'agents', llmModel: 'gpt-4o-mini', inputTokens: 42, outputTokens: 8, totalTokens: 50, totalCostUsd: 0.0000111 }
      await storeAndSummarise(db, [
        span(trace, '0000000000000001', t0, { parentSpanId: null, name: 'ai.generateText', llmRequestType: 'invoke_agent', sessionId: 'agent-session', ...call }),
        span(trace, '0000000000000002', t0, { name: 'ai.generateText.doGenerate', llmRequestType: 'chat', ...call }),
      ])
      const [row] = await summary(trace)
      assert.deepEqual([row?.input_tokens, row?.cost_usd, row?.models, row?.session_id], ['42', '0.0000111', ['gpt-4o-mini'], 'agent-session'])
      const usage = await usageOf(db, { projectId: 'agents', from: new Date(Number(t0 / 1_000_000n)), to: new Date(Number(t0 / 1_000_000n) + 1000), bucket: 'hour', timeZone: 'UTC' })
      assert.deepEqual([usage.totals.spans, usage.totals.inputTokens, usage.totals.outputTokens, usage.totals.costUsd], [2, 42, 8, 0.0000111])
    })

    it('filters by a model asked for or answering, and by vendor, whatever their case', async () => {
      const trace = '5'.repeat(32)
      await storeAndSummarise(db, [
        span(trace, '0000000000000001', t0, { projectId: 'models', parentSpanId: null, llmModel: 'gpt-4o-mini', llmResponseModel: 'gpt-4o-mini-2024-07-18', llmVendor: 'openai' }),
      ])
      const found = async (filter: { model?: string; vendor?: string }) =>
        (await searchTraces(db, { projectId: 'models', limit: 10, sort: 'time', order: 'desc', ...filter })).traces.map((row) => row.traceId)
      assert.deepEqual(await found({ model: 'gpt-4o-mini-2024-07-18' }), [trace], 'the response model')
      assert.deepEqual(await found({ model: 'GPT-4o-mini' }), [trace], 'the requested model, in another case')
      assert.deepEqual(await found({ vendor: 'OpenAI' }), [trace])
      assert.deepEqual(await found({ model: 'gpt-4o' }), [], 'a whole name, not a part')
      assert.deepEqual(await found({ vendor: 'anthropic' }), [])
    })

    it('the 2026-11-25T0400 migration recounts summaries that counted such spans', async () => {
      const trace = '4'.repeat(32)
      const call = { llmModel: 'gpt-4o-mini', inputTokens: 42, outputTokens: 8, totalTokens: 50, totalCostUsd: 0.0000111 }
      await storeAndSummarise(db, [
        span(trace, '0000000000000001', t0, { parentSpanId: null, llmRequestType: 'invoke_agent', ...call }),
        span(trace, '0000000000000002', t0, { llmRequestType: 'chat', ...call }),
      ])
      // As the writer summed them before: both spans counted.
      await sql`update trace_summaries set input_tokens = 84, output_tokens = 16, total_tokens = 100, cost_usd = 0.0000222 where trace_id = ${trace}`.execute(db)
      await migrations['2026-11-25T0400-agent-span-totals']!.up(db as never)
      const [row] = await summary(trace)
      assert.deepEqual([row?.input_tokens, row?.cost_usd], ['42', '0.0000111'])
    })
  })
}
