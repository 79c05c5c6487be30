import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, it } from 'node:test'
import { createDayPartition, poolOf, sql, type Db, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { seededRandom } from '@tracewell/test-support'
import { summaryBacklog } from '@tracewell/db'
import { foldSummaryDeltas, startSummariser, storeSpans, summariseAll, summaryMismatches } from '../src/index.ts'
import { storeByStatement } from './support/store-and-summarise.ts'

const second = 1_000_000_000n
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z

/**
 * Traces of one to twelve spans over three hours, with models, vendors, services, sessions,
 * users, errors, agent spans and costs that floating point cannot add exactly (0.1, 0.2, 1e-7), a
 * service whose name needs quoting in an array literal, and names and users holding what a COPY's
 * text must escape (tab, newline, carriage return, backslash).
 */
function generatedTraces(projectId: string, traces: number, seed: number): SpanInsert[] {
  const random = seededRandom(seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  const spans: SpanInsert[] = []
  for (let t = 0; t < traces; t++) {
    const traceId = `${seed.toString(16).padStart(8, '0')}${t.toString(16).padStart(24, '0')}`
    const start = t0 + BigInt(Math.floor(random() * 3 * 3600)) * second
    const session = random() < 0.6 ? `s${t % 7}` : null
    const user = random() < 0.7 ? (t % 5 === 4 ? 'u\t4\\' : `u${t % 5}`) : null
    const count = 1 + Math.floor(random() * 12)
    for (let s = 0; s < count; s++) {
      const spanStart = start + BigInt(Math.floor(random() * 600)) * second + BigInt(s) * 1000n
      const duration = BigInt(1 + Math.floor(random() * 5_000)) * 1_000_000n + 123_457n
      const model = random() < 0.7 ? pick(['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet']) : null
      spans.push({
        projectId, traceId, spanId: `${s.toString(16).padStart(15, '0')}1`, parentSpanId: s === 0 ? null : '0000000000000001',
        name: t % 4 === 0 ? `op ${s}\ttab\nline\rreturn \\back` : `op ${s}`, kind: 1, startTimeUnixNano: String(spanStart), endTimeUnixNano: String(spanStart + duration), durationNs: String(duration),
        traceState: null, statusCode: random() < 0.1 ? 2 : 0, statusMessage: null, serviceName: pick(['api', 'worker', null, 'svc "a,b" {c}\\d']),
        serviceVersion: null, scopeName: null, scopeVersion: null, llmVendor: model === null ? null : model.startsWith('gpt') ? 'openai' : 'anthropic',
        llmModel: model, llmRequestType: s === 1 && random() < 0.3 ? 'invoke_agent' : model === null ? null : 'chat',
        inputTokens: model === null ? null : Math.floor(random() * 2000), outputTokens: model === null ? null : Math.floor(random() * 500), totalTokens: null,
        totalCostUsd: model === null ? null : pick([0.1, 0.2, 1e-7, 0.3333333333333333, 0.000123, 2.5e-9]),
        sessionId: session, userId: user, attributes: { 'gen_ai.prompt': { stringValue: `words of trace ${t}` } }, resourceAttributes: {}, events: [], links: [],
      })
    }
  }
  return spans
}

/** Splits spans into batches at random, each span once, in a shuffled order. */
function randomBatches(spans: readonly SpanInsert[], seed: number): SpanInsert[][] {
  const random = seededRandom(seed)
  const shuffled = [...spans].sort(() => random() - 0.5)
  const batches: SpanInsert[][] = []
  for (let at = 0; at < shuffled.length; ) {
    const size = 1 + Math.floor(random() * 40)
    batches.push(shuffled.slice(at, at + size))
    at += size
  }
  return batches
}

for (const engine of engines) {
  describe(`summary fold on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('counts every stored span exactly once, whatever the batches, their order, redeliveries and fold sizes', async () => {
      const spans = generatedTraces('exact', 120, 1)
      const batches = randomBatches(spans, 2)
      const random = seededRandom(3)
      for (const [index, batch] of batches.entries()) {
        await storeSpans(db, batch)
        // A redelivered batch (by COPY's fallback or by statements) adds nothing.
        if (random() < 0.3) assert.equal((await storeSpans(db, batch)).inserted, 0)
        if (random() < 0.2) assert.equal(await storeByStatement(db, [...batch, ...(batches[index + 1] ?? []).slice(0, 1)]), (batches[index + 1] ?? []).length > 0 ? 1 : 0)
        // Folds of every size, some in the middle of the stream.
        if (random() < 0.3) await foldSummaryDeltas(db, { maxTraces: 1 + Math.floor(random() * 50), maxDeltas: 1 + Math.floor(random() * 5) })
      }
      await summariseAll(db)
      assert.deepEqual(await summaryMismatches(db, 'exact'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      assert.deepEqual(await summaryBacklog(db), { deltas: 0, traces: 0, lagSeconds: 0 })
    })

    it('writes a new trace\'s summary exactly: text a COPY must escape, its duration to the microsecond, its sets and words', async () => {
      const name = 'chat\tturn\nsecond line\r\\ end'
      const span: SpanInsert = {
        ...generatedTraces('copied', 1, 21)[0]!, parentSpanId: null, name, serviceName: 'svc\t"x"', userId: 'user\\1', sessionId: 'sess\n1',
        llmModel: 'gpt-4o', llmResponseModel: 'gpt-4o-2024-08-06', llmVendor: 'openai', llmRequestType: 'chat',
        startTimeUnixNano: '1767225600123456789', endTimeUnixNano: '1767225601000001999', durationNs: '876545210',
      }
      await storeSpans(db, [span])
      await summariseAll(db)
      const { rows } = await sql<{ name: string; service_name: string; user_id: string; session_id: string; duration_us: string; models: string[]; response_models: string[]; services: string[]; has_filter: boolean }>`
        select name, service_name, user_id, session_id, duration_us::text as duration_us, models, response_models, services, text_filter is not null as has_filter
        from trace_summaries where project_id = 'copied'`.execute(db)
      assert.deepEqual(rows, [{
        name, service_name: 'svc\t"x"', user_id: 'user\\1', session_id: 'sess\n1', duration_us: '876545',
        models: ['gpt-4o'], response_models: ['gpt-4o-2024-08-06'], services: ['svc\t"x"'], has_filter: true,
      }])
      assert.deepEqual(await summaryMismatches(db, 'copied'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
    })

    it("sums a trace's costs exactly: equal to the sum of its spans' stored costs, to the last digit", async () => {
      const costs = [0.1, 0.2, 0.3, 1e-7, 0.3333333333333333, 2.5e-9, 0.000123]
      const spans = costs.map((cost, i): SpanInsert => ({
        ...generatedTraces('costs', 1, 9)[0]!, spanId: `${i.toString(16).padStart(15, '0')}9`, parentSpanId: i === 0 ? null : '0000000000000009',
        llmModel: 'gpt-4o', llmRequestType: 'chat', totalCostUsd: cost,
      }))
      for (const span of spans) await storeSpans(db, [span])
      await summariseAll(db)
      const { rows } = await sql<{ summary: string; spans: string; float: number }>`
        select t.cost_usd::text as summary, (select sum(total_cost_usd) from spans where project_id = 'costs')::text as spans,
          (select sum(total_cost_usd::float8) from spans where project_id = 'costs') as float
        from trace_summaries t where t.project_id = 'costs'`.execute(db)
      assert.equal(rows[0]?.summary, rows[0]?.spans)
      assert.equal(rows[0]?.summary, '0.9334564358333333')
      assert.notEqual(String(rows[0]?.float), rows[0]?.spans, 'floating point would have drifted')
      const rollup = await sql<{ cost: string }>`select cost_usd::text as cost from usage_rollups where project_id = 'costs' and dimension = 'all'`.execute(db)
      assert.deepEqual(rollup.rows.map((row) => row.cost), [rows[0]?.spans])
    })

    it('finds the traces and sessions summarised on earlier days, sealed ones too, and moves them to today: one row each, exact', async () => {
      const spans = generatedTraces('days', 60, 11)
      const first = spans.filter((_, i) => i % 2 === 0)
      const rest = spans.filter((_, i) => i % 2 === 1)
      await storeSpans(db, first)
      await summariseAll(db)
      // As if summarised twelve and two days ago: sealed days, each found through its filter. Days
      // whose partitions the first fold did not see (yesterday's it sealed, empty: no fold writes
      // into a day before its own, sealed-summary-days.ts).
      const { rows: [clock] } = await sql<{ today: string; twoDaysAgo: string; sealed: string }>`
        select to_char(now() at time zone 'UTC', 'YYYY-MM-DD') as today, to_char(now() at time zone 'UTC' - interval '2 days', 'YYYY-MM-DD') as "twoDaysAgo",
          to_char(now() at time zone 'UTC' - interval '12 days', 'YYYY-MM-DD') as sealed`.execute(db)
      const { today, twoDaysAgo, sealed } = clock!
      for (const table of ['trace_summaries', 'session_summaries'] as const) {
        for (const day of [sealed, twoDaysAgo]) await db.transaction().execute((trx) => createDayPartition(trx, table, new Date(`${day}T00:00:00Z`)))
      }
      await sql`update trace_summaries set fold_day = case when trace_id < ${spans[Math.floor(spans.length / 2)]!.traceId} then ${sealed}::date else ${twoDaysAgo}::date end where project_id = 'days'`.execute(db)
      await sql`update session_summaries set fold_day = case when session_id = 's1' then ${twoDaysAgo}::date else ${sealed}::date end where project_id = 'days'`.execute(db)
      await sql`create table days_filters_before as select trace_id, text_filter from trace_summaries where project_id = 'days'`.execute(db)

      await storeSpans(db, rest)
      await summariseAll(db)
      assert.deepEqual(await summaryMismatches(db, 'days'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      const { rows: [rowsPerKey] } = await sql<{ traces: number; distinctTraces: number; sessions: number; distinctSessions: number }>`
        select (select count(*)::int from trace_summaries where project_id = 'days') as traces,
          (select count(distinct trace_id)::int from trace_summaries where project_id = 'days') as "distinctTraces",
          (select count(*)::int from session_summaries where project_id = 'days') as sessions,
          (select count(distinct session_id)::int from session_summaries where project_id = 'days') as "distinctSessions"`.execute(db)
      assert.equal(rowsPerKey!.traces, rowsPerKey!.distinctTraces)
      assert.equal(rowsPerKey!.sessions, rowsPerKey!.distinctSessions)
      // A trace that got no span later stays on its day; the others, and every session, were rewritten today.
      const restTraces = new Set(rest.map((span) => span.traceId))
      const untouched = new Set(first.map((span) => span.traceId).filter((id) => !restTraces.has(id)))
      const { rows: days } = await sql<{ trace_id: string; fold_day: string }>`select trace_id, fold_day::text as fold_day from trace_summaries where project_id = 'days'`.execute(db)
      for (const row of days) assert.equal(row.fold_day === today, !untouched.has(row.trace_id), `trace ${row.trace_id} on ${row.fold_day}`)
      const { rows: sessionDays } = await sql<{ fold_day: string }>`select distinct fold_day::text as fold_day from session_summaries where project_id = 'days'`.execute(db)
      assert.deepEqual(sessionDays, [{ fold_day: today }])
      // A moved trace keeps the words it had: its word filter holds the old one.
      const { rows: [lost] } = await sql<{ n: number }>`
        select count(*)::int as n from days_filters_before b join trace_summaries t on t.project_id = 'days' and t.trace_id = b.trace_id
        where b.text_filter is not null and tracewell_text_filter_union(b.text_filter, t.text_filter) <> t.text_filter`.execute(db)
      assert.equal(lost!.n, 0)
    })

    it('leaves the deltas of a fold that failed to the next one, which adds them once', async () => {
      await storeSpans(db, generatedTraces('failing', 20, 4))
      await sql`alter table usage_rollups rename to usage_rollups_away`.execute(db)
      await assert.rejects(foldSummaryDeltas(db), /usage_rollups/)
      await sql`alter table usage_rollups_away rename to usage_rollups`.execute(db)
      assert.ok((await summaryBacklog(db)).traces >= 20)
      await summariseAll(db)
      assert.deepEqual(await summaryMismatches(db, 'failing'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
    })
  })
}

describe('summary fold on postgres: one at a time', () => {
  let db: Db
  let drop: () => Promise<void>
  before(async () => ({ db, drop } = await engines[0]!.open()))
  after(() => drop())

  it('answers busy, without waiting, while another fold holds the turn', async () => {
    await storeSpans(db, generatedTraces('turns', 5, 5))
    const client = await poolOf.get(db)!.connect()
    try {
      await client.query('begin')
      await client.query('select pg_advisory_xact_lock(7215501872340113)')
      const started = Date.now()
      assert.equal(await foldSummaryDeltas(db), 'busy')
      assert.ok(Date.now() - started < 1_000)
      await client.query('rollback')
    } finally {
      client.release()
    }
    assert.deepEqual(await foldSummaryDeltas(db), { deltas: 1, traces: 5 })
  })

  it('the summariser loop folds what writers store, and reports the lag of what waits', async () => {
    const logged: string[] = []
    const logger = { info: (_: object, message: string) => logged.push(message), warn: (_: object, message: string) => logged.push(message), error: (_: object, message: string) => logged.push(message) }
    await storeSpans(db, generatedTraces('looped', 10, 6))
    await sleep(1_100)
    const waiting = await summaryBacklog(db)
    assert.equal(waiting.traces, 10)
    assert.ok(waiting.lagSeconds >= 1, `lag ${waiting.lagSeconds}`)
    const summariser = startSummariser({ db, logger, pollMs: 20 })
    try {
      for (let i = 0; i < 100 && (await summaryBacklog(db)).deltas > 0; i++) await sleep(50)
      await storeSpans(db, generatedTraces('looped', 15, 7))
      for (let i = 0; i < 100 && (await summaryBacklog(db)).deltas > 0; i++) await sleep(50)
    } finally {
      await summariser.close()
    }
    assert.deepEqual(await summaryBacklog(db), { deltas: 0, traces: 0, lagSeconds: 0 })
    assert.deepEqual(await summaryMismatches(db, 'looped'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
    assert.deepEqual(logged, [])
  })

  it('folds a steady stream a poll’s worth at a time, and a backlog back to back', async () => {
    const logger = { info: () => {}, warn: () => {}, error: () => {} }
    const pollMs = 400
    // A backlog: 12 batches of 10 traces, folded 20 traces at a time (each fold near its limit).
    for (let batch = 0; batch < 12; batch++) await storeSpans(db, generatedTraces(`backlog-${batch}`, 10, 100 + batch))
    const backlogFolds: Array<{ at: number; traces: number }> = []
    let summariser = startSummariser({ db, logger, pollMs, limits: { maxTraces: 20, maxDeltas: 500 }, onFolded: ({ traces }) => traces > 0 && backlogFolds.push({ at: performance.now(), traces }) })
    try {
      for (let i = 0; i < 200 && (await summaryBacklog(db)).deltas > 0; i++) await sleep(20)
    } finally {
      await summariser.close()
    }
    assert.deepEqual(backlogFolds.map((fold) => fold.traces), [20, 20, 20, 20, 20, 20])
    const backlogTook = (backlogFolds.at(-1) as { at: number }).at - (backlogFolds[0] as { at: number }).at
    assert.ok(backlogTook < 2 * pollMs, `six full folds took ${backlogTook.toFixed(0)} ms: a backlog is not paced`)

    // A steady stream: batches of 2 traces stored one after another, so that a fold started at
    // once would always find one; folds well under their limit of 10,000.
    const streamFolds: number[] = []
    let batches = 0
    const streamStarted = performance.now()
    summariser = startSummariser({ db, logger, pollMs, limits: { maxTraces: 10_000, maxDeltas: 500 }, onFolded: ({ traces }) => traces > 0 && streamFolds.push(performance.now()) })
    try {
      for (const until = performance.now() + 1_500; performance.now() < until; batches++) await storeSpans(db, generatedTraces(`stream-${batches}`, 2, 200 + batches))
      for (let i = 0; i < 200 && (await summaryBacklog(db)).deltas > 0; i++) await sleep(20)
    } finally {
      await summariser.close()
    }
    // A fold starts pollMs after the previous one did at the earliest: one a poll, and one more
    // for the rest of the stream (unpaced, a fold followed every batch or two, every ~15 ms).
    const lasted = (streamFolds.at(-1) ?? streamStarted) - streamStarted
    assert.ok(streamFolds.length >= 2 && streamFolds.length <= Math.floor(lasted / pollMs) + 2, `${batches} batches folded ${streamFolds.length} times in ${lasted.toFixed(0)} ms`)
    assert.deepEqual(await summaryBacklog(db), { deltas: 0, traces: 0, lagSeconds: 0 })
    for (let batch = 0; batch < batches; batch++) assert.deepEqual(await summaryMismatches(db, `stream-${batch}`), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
  })
})
