import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { createModelPrice, createProject, createTeam, findTraceSpans, type NewModelPrice } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { decodeJsonTraces, type SpanRecord } from '@tracewell/otlp'
import { Registry } from 'prom-client'
import { inProcessSpanBatchProcessor, SpanPricer } from '../src/index.ts'

// The writer prices every LLM span as it stores it: the caller's cost first, then the project's
// own prices (exact name, glob, effective date), then the price table; an unknown model keeps a
// null cost and is counted.

let spanCounter = 0
/** One decoded span with these attributes, started at `start` (ISO), as ingest hands it over. */
function llmSpan(attributes: Record<string, unknown>, start = '2026-11-20T12:00:00Z'): SpanRecord {
  const nanos = `${BigInt(Date.parse(start)) * 1_000_000n}`
  const id = (++spanCounter).toString(16)
  const { spans } = decodeJsonTraces({
    resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: id.padStart(32, 'a'), spanId: id.padStart(16, 'b'), name: 'chat', startTimeUnixNano: nanos, endTimeUnixNano: nanos, attributes }] }] }],
  })
  return spans[0] as SpanRecord
}
const s = (stringValue: string) => ({ stringValue })
const n = (intValue: number) => ({ intValue: String(intValue) })
const usage = (model: string, extra: Record<string, unknown> = {}) => ({
  'gen_ai.request.model': s(model), 'gen_ai.usage.input_tokens': n(1_000_000), 'gen_ai.usage.output_tokens': n(100_000), ...extra,
})

describe('span pricing in the writer (real Postgres)', () => {
  let database: TestDatabase
  let projectId: string

  before(async () => {
    database = await createTestDatabase()
    const team = await createTeam(database.db, { name: 'pricing' })
    projectId = (await createProject(database.db, { teamId: team.id, name: 'pricing' })).id
  })
  after(() => database.drop())

  async function store(pricer: SpanPricer, spans: SpanRecord[]) {
    await inProcessSpanBatchProcessor(database.db, pricer)([{ projectId, spans }])
    return Promise.all(
      spans.map(async (span) => {
        const [stored] = await findTraceSpans(database.db, projectId, span.traceId)
        assert.ok(stored)
        return { input: stored.inputCostUsd, output: stored.outputCostUsd, total: stored.totalCostUsd, source: stored.costSource }
      }),
    )
  }
  const addPrice = (price: Omit<NewModelPrice, 'projectId'>) => createModelPrice(database.db, { projectId, ...price })
  const unpriced = async (registry: Registry) => (await registry.getSingleMetricAsString('tracewell_writer_unpriced_llm_spans_total')).split('\n').filter((line) => !line.startsWith('#'))

  test('the price table, a caller’s cost that wins over it, and an unknown model counted with a null cost', async () => {
    const registry = new Registry()
    const pricer = new SpanPricer({ db: database.db, metrics: registry })
    const costs = await store(pricer, [
      llmSpan(usage('gpt-4o-mini', { 'gen_ai.usage.cache_read.input_tokens': n(500_000) })),
      llmSpan(usage('gpt-4o-mini', { 'llm.cost.total': { doubleValue: 0.42 } })),
      llmSpan(usage('acme-llm-7b')),
      llmSpan(usage('acme-llm-7b')),
      llmSpan({ 'gen_ai.usage.input_tokens': n(10) }),
      llmSpan({ 'http.route': s('/orders') }),
    ])
    assert.deepEqual(costs, [
      // 500k uncached at $0.15/M + 500k cached at $0.075/M; 100k output at $0.60/M.
      { input: 0.1125, output: 0.06, total: 0.1725, source: 'price_table' },
      { input: null, output: null, total: 0.42, source: 'attribute' },
      { input: null, output: null, total: null, source: null },
      { input: null, output: null, total: null, source: null },
      { input: null, output: null, total: null, source: null },
      { input: null, output: null, total: null, source: null },
    ])
    assert.deepEqual(await unpriced(registry), [
      'tracewell_writer_unpriced_llm_spans_total{reason="unknown_model"} 2',
      'tracewell_writer_unpriced_llm_spans_total{reason="no_model"} 1',
    ])
  })

  test('the project’s own prices: exact name, glob, effective date, and 0 for a local model', async () => {
    await addPrice({ model: 'ft:gpt-4o-mini:acme:support', match: 'exact', usdPerMillionTokens: { input: 1, output: 2 }, effectiveFrom: null })
    await addPrice({ model: 'llama3*', match: 'glob', usdPerMillionTokens: { input: 0, output: 0 }, effectiveFrom: null })
    await addPrice({ model: 'acme-*', match: 'glob', usdPerMillionTokens: { input: 0.5, output: 1 }, effectiveFrom: null })
    await addPrice({ model: 'acme-*', match: 'glob', usdPerMillionTokens: { input: 5, output: 10 }, effectiveFrom: new Date('2026-11-15T00:00:00Z') })
    await addPrice({ model: 'gpt-4o-mini', match: 'exact', usdPerMillionTokens: { input: 3, output: 3, cacheRead: 0 }, effectiveFrom: new Date('2026-12-01T00:00:00Z') })
    const pricer = new SpanPricer({ db: database.db, metrics: new Registry() })
    const costs = await store(pricer, [
      llmSpan(usage('ft:gpt-4o-mini:acme:support')),
      llmSpan({ 'gen_ai.provider.name': s('ollama'), ...usage('llama3.2:3b') }),
      llmSpan(usage('acme-llm-7b'), '2026-11-14T23:59:59Z'),
      llmSpan(usage('acme-llm-7b'), '2026-11-15T00:00:00Z'),
      // Before its own price's date the table prices gpt-4o-mini; from it, the project's price.
      llmSpan(usage('gpt-4o-mini'), '2026-11-30T23:59:59Z'),
      llmSpan(usage('gpt-4o-mini', { 'gen_ai.usage.cache_read.input_tokens': n(1_000_000) }), '2026-12-01T00:00:00Z'),
    ])
    assert.deepEqual(costs, [
      { input: 1, output: 0.2, total: 1.2, source: 'custom_price' },
      { input: 0, output: 0, total: 0, source: 'custom_price' },
      { input: 0.5, output: 0.1, total: 0.6, source: 'custom_price' },
      { input: 5, output: 1, total: 6, source: 'custom_price' },
      { input: 0.15, output: 0.06, total: 0.21, source: 'price_table' },
      { input: 0, output: 0.3, total: 0.3, source: 'custom_price' },
    ])
  })

  test('reads a project’s prices again once its cache entry is older than the TTL', async () => {
    // A clock of the test's own: a loaded machine must not make the cached read look expired.
    let now = Date.now()
    const pricer = new SpanPricer({ db: database.db, metrics: new Registry(), priceCacheTtlMs: 300, now: () => now })
    const [before] = await store(pricer, [llmSpan(usage('house-model'))])
    await addPrice({ model: 'house-model', match: 'exact', usdPerMillionTokens: { input: 1, output: 1 }, effectiveFrom: null })
    const [cached] = await store(pricer, [llmSpan(usage('house-model'))])
    now += 301
    const [reread] = await store(pricer, [llmSpan(usage('house-model'))])
    assert.deepEqual([before?.total, cached?.total, reread?.total], [null, null, 1.1])
  })

  test('prices the spans of every library’s fixture as they are stored', async () => {
    const fixture = (file: string) =>
      decodeJsonTraces(JSON.parse(readFileSync(new URL(`../../../test-fixtures/llm-conventions/${file}`, import.meta.url), 'utf8'))).spans
    const spans = ['openinference-openai.json', 'vercel-ai-sdk-5.json', 'langtrace-python-otlp.json'].flatMap(fixture)
    const pricer = new SpanPricer({ db: database.db, metrics: new Registry() })
    await inProcessSpanBatchProcessor(database.db, pricer)([{ projectId, spans }])
    const stored = await Promise.all(spans.map(async (span) => (await findTraceSpans(database.db, projectId, span.traceId)).find((row) => row.spanId === span.spanId)))
    assert.deepEqual(
      stored.map((row) => row && [row.llmVendor, row.llmModel, row.sessionId, row.totalTokens, row.totalCostUsd]),
      [
        ['openai', 'o3-mini', 'sess-oi-1', 1840, 0.0035728],
        ['openai', 'gpt-4.1-mini', 'sess-v-77', 1020, 0.000552],
        ['openai', 'gpt-4.1-mini', 'sess-v-77', 1020, 0.000552],
        ['openai', 'gpt-4o', 'lt-session-1', 3250, 0.00744],
      ],
    )
  })
})
