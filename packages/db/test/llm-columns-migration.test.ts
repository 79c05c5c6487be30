import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { Migrator, sql } from 'kysely'
import { migrateToLatest, pendingMigrations, type Db } from '../src/index.ts'
import * as initialSchema from '../src/migrations/2026-11-22T0300-initial-schema.ts'
import { BACKFILL_BATCH_SIZE } from '../src/migrations/2026-11-24T1000-llm-columns-and-cost.ts'
import { engines } from '../src/testing/index.ts'

// Spans stored before the LLM columns existed get them from the migration that adds them: every
// library's span (test-fixtures/llm-conventions) stored as the previous version stored it, among
// more plain spans than one backfill batch holds.

interface FixtureSpan {
  traceId: string
  spanId: string
  name: string
  startTimeUnixNano: string
  attributes: Array<{ key: string; value: unknown }>
}

function fixtureSpans(file: string): FixtureSpan[] {
  const request = JSON.parse(readFileSync(new URL(`../../../test-fixtures/llm-conventions/${file}`, import.meta.url), 'utf8')) as {
    resourceSpans: Array<{ scopeSpans: Array<{ spans: FixtureSpan[] }> }>
  }
  return request.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans))
}

interface OldDerivedColumns {
  llm_vendor?: string
  llm_model?: string
  llm_request_type?: string
  input_tokens?: number
  output_tokens?: number
  total_tokens?: number
}

/** A row with the initial schema's columns only, as the version before this migration wrote it. */
function oldRow(projectId: string, span: FixtureSpan, derived: OldDerivedColumns = {}) {
  const start = new Date(Number(BigInt(span.startTimeUnixNano) / 1_000_000n))
  return {
    project_id: projectId, trace_id: span.traceId, span_id: span.spanId, parent_span_id: null, name: span.name, kind: 3,
    start_time: start, end_time: start, duration_ns: 0, trace_state: null, status_code: 1, status_message: null,
    service_name: 'support-bot', service_version: null, scope_name: null, scope_version: null,
    llm_vendor: null, llm_model: null, llm_request_type: null, input_tokens: null, output_tokens: null, total_tokens: null, ...derived,
    attributes: JSON.stringify(Object.fromEntries(span.attributes.map(({ key, value }) => [key, value]))),
    resource_attributes: '{}', events: '[]', links: '[]',
  }
}

const NEW_COLUMNS = [
  'llm_vendor', 'llm_model', 'llm_response_model', 'llm_request_type', 'input_tokens', 'output_tokens', 'total_tokens', 'cached_input_tokens',
  'cache_write_input_tokens', 'reasoning_tokens', 'session_id', 'user_id', 'input_cost_usd', 'output_cost_usd', 'total_cost_usd', 'cost_source',
] as const

for (const engine of engines) {
  describe(`the LLM columns migration on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open({ migrated: false }))
      const initial = new Migrator({ db, provider: { getMigrations: async () => ({ '2026-11-22T0300-initial-schema': initialSchema }) } })
      const { error } = await initial.migrateToLatest()
      if (error) throw error
    })
    after(() => drop())

    it('fills the new columns of spans stored before it, in batches, and leaves other spans alone', async () => {
      const [openInference] = fixtureSpans('openinference-openai.json')
      const [vercelOuter, vercelCall] = fixtureSpans('vercel-ai-sdk-5.json')
      const [openllmetry] = fixtureSpans('openllmetry-openai.json')
      const [bedrock] = fixtureSpans('otel-genai-bedrock.json')
      assert.ok(openInference && vercelOuter && vercelCall && openllmetry && bedrock)
      const plainSpan = (i: number): FixtureSpan => ({
        traceId: i.toString(16).padStart(32, '0'), spanId: '00000000000000a1', name: 'GET /orders', startTimeUnixNano: '1795316906000000000',
        attributes: [{ key: 'http.route', value: { stringValue: '/orders' } }],
      })
      // More plain spans than two batches hold, between the LLM spans in primary-key order: the
      // LLM spans of project "zz" are only reached by the third batch.
      const plain = Array.from({ length: 2 * BACKFILL_BATCH_SIZE + 500 }, (_, i) => oldRow('p-plain', plainSpan(i)))
      const rows = [
        // What the previous version derived: nothing from OpenInference or the Vercel AI SDK's outer span.
        oldRow('aa', openInference),
        oldRow('aa', vercelOuter),
        oldRow('aa', vercelCall, { llm_vendor: 'openai.responses', llm_model: 'gpt-4.1-mini', input_tokens: 900, output_tokens: 120, total_tokens: 1020 }),
        ...plain,
        oldRow('zz', openllmetry, { llm_model: 'gpt-4o-mini', llm_request_type: 'chat', input_tokens: 1840, output_tokens: 96, total_tokens: 1936 }),
        oldRow('zz', bedrock, { llm_model: 'anthropic.claude-sonnet-4-20250514-v1:0', llm_request_type: 'chat', input_tokens: 5200, output_tokens: 700, total_tokens: 5900 }),
      ]
      for (let i = 0; i < rows.length; i += 1000) await db.insertInto('spans').values(rows.slice(i, i + 1000)).execute()

      assert.ok((await migrateToLatest(db)).includes('2026-11-24T1000-llm-columns-and-cost'))
      assert.deepEqual(await pendingMigrations(db), [])

      const stored = async (projectId: string, spanId: string) => {
        const row = await db.selectFrom('spans').select(NEW_COLUMNS).where('project_id', '=', projectId).where('span_id', '=', spanId).executeTakeFirstOrThrow()
        return { ...row }
      }
      const none = Object.fromEntries(NEW_COLUMNS.map((column) => [column, null]))
      // What the migration computed when it was written (its frozen llm-usage): today's library
      // reads OpenInference's request model, 'o3-mini', but an old migration's result never changes.
      assert.deepEqual(await stored('aa', openInference.spanId), {
        ...none, llm_vendor: 'openai', llm_model: 'o3-mini-2025-01-31', llm_response_model: 'o3-mini-2025-01-31', llm_request_type: 'chat',
        input_tokens: '1200', output_tokens: '640', total_tokens: '1840', cached_input_tokens: '1024', reasoning_tokens: '512',
        session_id: 'sess-oi-1', user_id: 'user-oi-9', input_cost_usd: '0.0007568', output_cost_usd: '0.002816', total_cost_usd: '0.0035728', cost_source: 'price_table',
      })
      assert.deepEqual(await stored('aa', vercelOuter.spanId), {
        ...none, llm_vendor: 'openai', llm_model: 'gpt-4.1-mini', llm_request_type: 'invoke_agent', input_tokens: '900', output_tokens: '120',
        total_tokens: '1020', cached_input_tokens: '0', reasoning_tokens: '0', session_id: 'sess-v-77', user_id: 'user-v-3',
        input_cost_usd: '0.00036', output_cost_usd: '0.000192', total_cost_usd: '0.000552', cost_source: 'price_table',
      })
      assert.deepEqual(await stored('aa', vercelCall.spanId), {
        ...none, llm_vendor: 'openai', llm_model: 'gpt-4.1-mini', llm_response_model: 'gpt-4.1-mini-2025-04-14', llm_request_type: 'chat',
        input_tokens: '900', output_tokens: '120', total_tokens: '1020', session_id: 'sess-v-77', user_id: 'user-v-3',
        input_cost_usd: '0.00036', output_cost_usd: '0.000192', total_cost_usd: '0.000552', cost_source: 'price_table',
      })
      assert.deepEqual(await stored('zz', openllmetry.spanId), {
        ...none, llm_vendor: 'openai', llm_model: 'gpt-4o-mini', llm_response_model: 'gpt-4o-mini-2024-07-18', llm_request_type: 'chat',
        input_tokens: '1840', output_tokens: '96', total_tokens: '1936', cached_input_tokens: '1536', session_id: 'sess-7f3a', user_id: 'user-1042',
        input_cost_usd: '0.0001608', output_cost_usd: '0.0000576', total_cost_usd: '0.0002184', cost_source: 'price_table',
      })
      assert.deepEqual(await stored('zz', bedrock.spanId), {
        ...none, llm_vendor: 'aws.bedrock', llm_model: 'anthropic.claude-sonnet-4-20250514-v1:0', llm_request_type: 'chat', input_tokens: '5200',
        output_tokens: '700', total_tokens: '5900', cached_input_tokens: '4000', cache_write_input_tokens: '1000', reasoning_tokens: '300',
        session_id: 'conv_5j66UpCpwteGg4YSxUnt7lPY', user_id: 'user-otel-1', input_cost_usd: '0.00555', output_cost_usd: '0.0105',
        total_cost_usd: '0.01605', cost_source: 'price_table',
      })

      const { rows: plainRows } = await sql<{ spans: string; touched: string }>`
        select count(*)::text as spans, count(*) filter (where num_nonnulls(${sql.join(NEW_COLUMNS.map((column) => sql.ref(column)))}) > 0)::text as touched
        from spans where project_id = 'p-plain'`.execute(db)
      assert.deepEqual(plainRows, [{ spans: String(plain.length), touched: '0' }])
    })

    it('creates the project model prices table, empty', async () => {
      assert.deepEqual(await db.selectFrom('project_model_prices').selectAll().execute(), [])
    })
  })
}
