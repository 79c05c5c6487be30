import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { backfillActiveDays, backfillTraceRollups, backfillTraceShapes, backfillUsageRollups, backfillUserDayFigures, backfillUserDayHours, nullUnknownTokenCounts, recountRollupTraces, sql, usageOf, type Db, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { summaryMismatches } from '../src/index.ts'
import { storeAndSummarise } from './support/store-and-summarise.ts'

const second = 1_000_000_000n
const hour = 3600n * second
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z

// A generated day with known answers: 24 traces, one an hour at hh:10, each a root (no model) and
// three LLM calls (models m0, m1, m2 in turn, vendor v0 or v1, user u0..u2), the third call of
// every fourth trace failing, and the last call of trace 5 starting in the next hour.
function generated(projectId: string): SpanInsert[] {
  const spans: SpanInsert[] = []
  for (let t = 0; t < 24; t++) {
    const traceId = t.toString(16).padStart(32, '0')
    const start = t0 + BigInt(t) * hour + 600n * second
    const base = (spanId: string, startNs: bigint, durationMs: bigint, extra: Partial<SpanInsert>): SpanInsert => ({
      projectId, traceId, spanId, parentSpanId: null, name: 'op', kind: 1,
      startTimeUnixNano: String(startNs), endTimeUnixNano: String(startNs + durationMs * 1_000_000n), durationNs: String(durationMs * 1_000_000n),
      traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
      llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
      attributes: {}, resourceAttributes: {}, events: [], links: [], userId: `u${t % 3}`,
      ...extra,
    })
    spans.push(base(`${t.toString(16).padStart(14, '0')}00`, start, 4000n, {}))
    for (let c = 1; c <= 3; c++) {
      const callStart = t === 5 && c === 3 ? start + hour : start + BigInt(c) * second
      spans.push(base(`${t.toString(16).padStart(14, '0')}0${c}`, callStart, 100n * BigInt(c), {
        parentSpanId: `${t.toString(16).padStart(14, '0')}00`, llmModel: `m${c - 1}`, llmVendor: `v${c % 2}`,
        inputTokens: 10 * c, outputTokens: c, totalCostUsd: c * 0.25, statusCode: c === 3 && t % 4 === 0 ? 2 : 0,
      }))
    }
  }
  return spans
}

const day = { from: new Date('2026-01-01T00:00:00Z'), to: new Date('2026-01-02T00:00:00Z') }

for (const engine of engines) {
  describe(`usage rollups on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('answers the generated day exactly, by model, in a whole-hour zone', async () => {
      const spans = generated('p')
      // In three batches, the middle one split across traces, then every batch redelivered.
      const batches = [spans.slice(0, 30), spans.slice(30, 61), spans.slice(61)]
      for (const batch of batches) await storeAndSummarise(db, batch)
      for (const batch of batches) assert.equal(await storeAndSummarise(db, batch), 0)
      const usage = await usageOf(db, { projectId: 'p', ...day, bucket: 'day', timeZone: 'UTC', groupBy: 'model' })
      // Trace 5's third call starts in the next hour: the call counts there, the trace only in the hour it started.
      assert.deepEqual({ ...usage.totals, latencyP50Ms: undefined, latencyP95Ms: undefined }, {
        traces: 24, spans: 96, errors: 6, inputTokens: 24 * 60, outputTokens: 24 * 6, costUsd: 24 * 1.5, latencyP50Ms: undefined, latencyP95Ms: undefined,
      })
      // 200 ms is the median call: within the histogram's 9.1%.
      assert.ok(Math.abs((usage.totals.latencyP50Ms as number) / 200 - 1) < 0.091, String(usage.totals.latencyP50Ms))
      assert.ok(Math.abs((usage.totals.latencyP95Ms as number) / 300 - 1) < 0.091, String(usage.totals.latencyP95Ms))
      const rows = usage.series.map((row) => [row.bucket, row.group, row.traces, row.spans, row.errors, row.inputTokens, row.costUsd])
      // A trace counts under each model it called; under no model only when it called none. The
      // spans without a model reported no tokens: unknown (null), not 0.
      assert.deepEqual(rows, [
        ['2026-01-01T00:00:00.000Z', null, 0, 24, 0, null, null],
        ['2026-01-01T00:00:00.000Z', 'm0', 24, 24, 0, 240, 6],
        ['2026-01-01T00:00:00.000Z', 'm1', 24, 24, 0, 480, 12],
        ['2026-01-01T00:00:00.000Z', 'm2', 24, 24, 6, 720, 18],
      ])
    })

    it('rolls Tracewell’s own calls up by model and vendor too, which usage takes back unless asked', async () => {
      const ownTrace = 'f'.repeat(32)
      const calls = generated('own').slice(0, 8)
      // Two of Tracewell's calls (a judge's, service tracewell, no user) beside the generated traces 0 and 1.
      const own = [0, 1].map((i): SpanInsert => ({
        ...(calls[1] as SpanInsert), traceId: ownTrace, spanId: `${'f'.repeat(15)}${i}`, parentSpanId: null, serviceName: 'tracewell', userId: null,
        llmModel: i === 0 ? 'm0' : 'judge', llmVendor: 'v1', inputTokens: 1000, outputTokens: 100, totalCostUsd: 2, statusCode: 0, durationNs: String(60n * second), endTimeUnixNano: String(BigInt((calls[1] as SpanInsert).startTimeUnixNano) + 60n * second),
      }))
      await storeAndSummarise(db, [...calls, ...own])
      const rows = await sql<{ dimension: string; value: string; traces: number; spans: number }>`
        select dimension, value, traces, spans from usage_rollups where project_id = 'own' and dimension like 'tracewell.%' order by 1, 2`.execute(db)
      assert.deepEqual(rows.rows, [
        { dimension: 'tracewell.model', value: 'judge', traces: 1, spans: 1 },
        { dimension: 'tracewell.model', value: 'm0', traces: 1, spans: 1 },
        { dimension: 'tracewell.vendor', value: 'v1', traces: 1, spans: 2 },
      ])
      assert.deepEqual(await summaryMismatches(db, 'own'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      await recountRollupTraces(db)
      // The recount of the usage rollups' migration knows the traces of spans' values only; the
      // figures of traces (2026-12-06T0700), the rows of the day (2026-12-06T0710), the users' figures in
      // them (2026-12-06T0820) and hours (T1621), and the traces' shapes (T1620) are backfilled after it.
      await backfillTraceRollups(db)
      await backfillActiveDays(db)
      await backfillUserDayFigures(db)
      await backfillUserDayHours(db)
      await backfillTraceShapes(db)
      assert.deepEqual(await summaryMismatches(db, 'own'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })

      const query = { projectId: 'own', ...day, bucket: 'day' as const, timeZone: 'UTC' }
      const application = await usageOf(db, query)
      const everything = await usageOf(db, { ...query, includeTracewellCalls: true })
      assert.deepEqual([application.totals.traces, application.totals.spans, application.totals.inputTokens, application.totals.costUsd], [2, 8, 120, 3])
      assert.deepEqual([everything.totals.traces, everything.totals.spans, everything.totals.inputTokens, everything.totals.costUsd], [3, 10, 2120, 7])
      // The minute-long judge calls would pull the 95th percentile up: only the application's (≤ 300 ms) count.
      assert.ok((application.totals.latencyP95Ms as number) < 330, String(application.totals.latencyP95Ms))
      assert.ok((everything.totals.latencyP95Ms as number) > 50_000, String(everything.totals.latencyP95Ms))
      const byModel = async (include: boolean) =>
        (await usageOf(db, { ...query, groupBy: 'model', includeTracewellCalls: include })).series.map((row) => [row.group, row.traces, row.spans, row.inputTokens])
      // The roots have no model: their spans count under '', their traces under the models they used.
      assert.deepEqual(await byModel(false), [[null, 0, 2, null], ['m0', 2, 2, 20], ['m1', 2, 2, 40], ['m2', 2, 2, 60]])
      assert.deepEqual(await byModel(true), [[null, 0, 2, null], ['judge', 1, 1, 1000], ['m0', 3, 3, 1020], ['m1', 2, 2, 40], ['m2', 2, 2, 60]])
    })

    it('groups hours into the days of a time zone', async () => {
      // Berlin is UTC+1 in January: the hours from 23:00 UTC are the next local day.
      const usage = await usageOf(db, { projectId: 'p', ...day, bucket: 'day', timeZone: 'Europe/Berlin' })
      assert.deepEqual(usage.series.map((row) => [row.bucket, row.group, row.traces, row.spans]), [
        ['2025-12-31T23:00:00.000Z', null, 23, 92],
        ['2026-01-01T23:00:00.000Z', null, 1, 4],
      ])
    })

    it('equals a scan of the spans by user and by hour, and the backfill recounted equals the summariser', async () => {
      // Spans in the hour they started; traces in the hour their first span started, under their user.
      const spans = (await sql<{ hour: Date; value: string; spans: string }>`
        select date_trunc('hour', start_time, 'UTC') as hour, coalesce(user_id, '') as value, count(*)::text as spans
        from spans where project_id = 'p' group by 1, 2`.execute(db)).rows
      const traces = (await sql<{ hour: Date; value: string; traces: string }>`
        select date_trunc('hour', start, 'UTC') as hour, coalesce(user_id, '') as value, count(*)::text as traces
        from (select min(start_time) as start, (array_agg(user_id order by start_time) filter (where user_id is not null))[1] as user_id
          from spans where project_id = 'p' group by trace_id) as t
        group by 1, 2`.execute(db)).rows
      const expected = new Map<string, [string, string, string, string]>()
      for (const row of spans) expected.set(`${row.hour.toISOString()} ${row.value}`, [row.hour.toISOString(), row.value, '0', row.spans])
      for (const row of traces) {
        const key = `${row.hour.toISOString()} ${row.value}`
        expected.set(key, [row.hour.toISOString(), row.value, row.traces, expected.get(key)?.[3] ?? '0'])
      }
      const usage = await usageOf(db, { projectId: 'p', ...day, bucket: 'hour', timeZone: 'UTC', groupBy: 'user' })
      assert.deepEqual(
        usage.series.map((row) => [row.bucket, row.group ?? '', String(row.traces), String(row.spans)]),
        [...expected.values()].sort((a, b) => (a[0] + a[1] < b[0] + b[1] ? -1 : 1)),
      )
      // A trace whose spans came in two batches changed shape: the fold leaves the row it moved out of empty, the backfill makes none.
      const written = (await sql`select project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd::float8 as cost, latency, error_traces, durations, hours from usage_rollups where project_id = 'p' and not (dimension = 'shape' and traces = 0) order by 1, 2, 3, 4`.execute(db)).rows
      await sql`delete from usage_rollups`.execute(db)
      await backfillUsageRollups(db)
      await recountRollupTraces(db)
      // The backfill, older than unknown token counts, writes 0 where the migration after it leaves null.
      // (Project p's rows: the backfill, older than the rollups of Tracewell's own calls, writes none of those.)
      await nullUnknownTokenCounts(db)
      await backfillTraceRollups(db)
      await backfillActiveDays(db)
      await backfillUserDayFigures(db)
      await backfillUserDayHours(db)
      await backfillTraceShapes(db)
      assert.deepEqual((await sql`select project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd::float8 as cost, latency, error_traces, durations, hours from usage_rollups where project_id = 'p' and not (dimension = 'shape' and traces = 0) order by 1, 2, 3, 4`.execute(db)).rows, written)
    })
  })
}
