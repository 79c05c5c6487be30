import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Migrator, sql, type Migration } from 'kysely'
import { backfillSessionSummaries, backfillTraceSummaries, backfillUsageRollups, migrateToLatest, pendingMigrations, type Db } from '../src/index.ts'
import { migrations } from '../src/migrations/index.ts'
import { engines } from '../src/testing/index.ts'

// Summaries written before token counts could be unknown said 0 where no span reported one; the
// migration after them says null there and keeps a 0 that a span reported. Spans stored before
// estimated counts were marked get the mark from their attributes, and their traces with them.

/** Applies the migrations before these two, one at a time as the migrator does (a backfill runs outside a transaction). */
async function migrateBefore2310(db: Db): Promise<void> {
  const names = Object.keys(migrations).filter((name) => name < '2026-11-26T2310')
  for (const [i, name] of names.entries()) {
    const selected = Object.fromEntries(names.slice(0, i + 1).map((n) => [n, migrations[n] as Migration]))
    const migrator = new Migrator({ db, provider: { getMigrations: async () => selected }, disableTransactions: migrations[name]?.transactional === false })
    const { error } = await migrator.migrateToLatest()
    if (error) throw error
  }
}
const hourMs = 3_600_000
const t0 = Date.parse('2026-01-01T00:00:00Z')

interface OldSpan {
  trace: string
  hour: number
  session: string
  tokens?: [number, number, number]
  attributes?: Record<string, unknown>
  scope?: string
}

/** A row as the version before these migrations stored it (no tokens_estimated column). */
function oldRow({ trace, hour, session, tokens, attributes = {}, scope }: OldSpan, spanId: string) {
  const start = new Date(t0 + hour * hourMs)
  return {
    project_id: 'p', trace_id: trace.repeat(32), span_id: spanId.repeat(16), parent_span_id: null, name: 'op', kind: 3,
    start_time: start, end_time: new Date(start.getTime() + 5), duration_ns: 5_000_000, trace_state: null, status_code: 1, status_message: null,
    service_name: 'svc', service_version: null, scope_name: scope ?? null, scope_version: null,
    llm_vendor: tokens ? 'openai' : null, llm_model: tokens ? 'gpt-4o-mini' : null, llm_request_type: tokens ? 'chat' : null,
    input_tokens: tokens?.[0] ?? null, output_tokens: tokens?.[1] ?? null, total_tokens: tokens?.[2] ?? null, session_id: session,
    attributes: JSON.stringify(attributes), resource_attributes: '{}', events: '[]', links: '[]',
  }
}

for (const engine of engines) {
  describe(`the unknown and estimated token migrations on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open({ migrated: false }))
      await migrateBefore2310(db)
    })
    after(() => drop())

    it('nulls the counts no span reported, keeps reported zeros, and marks estimated spans and traces', async () => {
      await db.insertInto('spans').values([
        // a: one call with counts and a plain span; b: no counts at all; c: a Langtrace stream; d: counts of 0.
        oldRow({ trace: 'a', hour: 0, session: 's-a', tokens: [10, 5, 15] }, '1'),
        oldRow({ trace: 'a', hour: 0, session: 's-a' }, '2'),
        oldRow({ trace: 'b', hour: 1, session: 's-b' }, '3'),
        oldRow({ trace: 'b', hour: 1, session: 's-b' }, '4'),
        oldRow({
          trace: 'c', hour: 2, session: 's-c', tokens: [7, 6, 13],
          attributes: { 'langtrace.sdk.name': { stringValue: '@langtrase/typescript-sdk' }, 'gen_ai.request.stream': { boolValue: true } },
        }, '5'),
        oldRow({ trace: 'd', hour: 3, session: 's-d', tokens: [0, 0, 0] }, '6'),
      ] as never).execute()
      await backfillTraceSummaries(db)
      await backfillUsageRollups(db)
      await backfillSessionSummaries(db)
      const zeros = await sql<{ n: number }>`select count(*)::integer as n from trace_summaries where input_tokens = 0`.execute(db)
      assert.equal(zeros.rows[0]?.n, 2, 'the earlier backfill wrote 0 for b and d')

      const applied = await migrateToLatest(db)
      assert.ok(applied.includes('2026-11-26T2310-unknown-token-counts') && applied.includes('2026-11-26T2311-estimated-tokens'), applied.join(', '))
      assert.deepEqual(await pendingMigrations(db), [])

      const traces = await sql<{ trace: string; input: string | null; output: string | null; total: string | null; estimated: boolean }>`
        select left(trace_id, 1) as trace, input_tokens as input, output_tokens as output, total_tokens as total, tokens_estimated as estimated
        from trace_summaries order by trace_id`.execute(db)
      assert.deepEqual(traces.rows.map((r) => [r.trace, r.input, r.output, r.total, r.estimated]), [
        ['a', '10', '5', '15', false], ['b', null, null, null, false], ['c', '7', '6', '13', true], ['d', '0', '0', '0', false],
      ])
      const spans = await sql<{ span: string; estimated: boolean }>`select left(span_id, 1) as span, tokens_estimated as estimated from spans order by span_id`.execute(db)
      assert.deepEqual(spans.rows.map((r) => [r.span, r.estimated]), [['1', false], ['2', false], ['3', false], ['4', false], ['5', true], ['6', false]])

      const sessions = await sql<{ session_id: string; total: string | null }>`select session_id, total_tokens as total from session_summaries order by session_id`.execute(db)
      assert.deepEqual(sessions.rows.map((r) => [r.session_id, r.total]), [['s-a', '15'], ['s-b', null], ['s-c', '13'], ['s-d', '0']])

      const rollups = await sql<{ hour: Date; input: string | null; output: string | null }>`
        select hour, input_tokens as input, output_tokens as output from usage_rollups where dimension = 'all' order by hour`.execute(db)
      assert.deepEqual(rollups.rows.map((r) => [(r.hour.getTime() - t0) / hourMs, r.input, r.output]), [[0, '10', '5'], [1, null, null], [2, '7', '6'], [3, '0', '0']])
      const byModel = await sql<{ value: string; input: string | null }>`
        select value, input_tokens as input from usage_rollups where dimension = 'model' and hour = ${new Date(t0)} order by value`.execute(db)
      assert.deepEqual(byModel.rows.map((r) => [r.value, r.input]), [['', null], ['gpt-4o-mini', '10']], 'the plain span’s row beside the call’s')
    })
  })
}
