import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { deleteSummariesOfWindow, histogramPercentileMs, MAX_SERIES_GROUPS, metricSeries, sql, type Db, type Metric, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeSpans, summariseAll, summaryMismatches } from '../src/index.ts'
import { chatSpan } from './support/chat-span.ts'
import { addHistogram } from './support/histogram-sums.ts'

// Users ranked over windows of weeks (issue 45 §3): a user's rows of the week (user_week_figures,
// migration 2026-12-06T1610), kept by a trigger on their rows of the day, and windows read as
// whole weeks, days and hours, some taken back (a week less its days and hours outside the window).

const hourMs = 3_600_000
const dayMs = 86_400_000
// A Monday: the weeks' rows start on Mondays.
const monday = Date.parse('2026-01-05T00:00:00Z')

// Traces 53 minutes apart over 22 days from the Saturday before: 67 users with uneven counts
// (every 13th trace left out), one in six failing, durations and costs varied.
const start = monday - 2 * dayMs
const TRACES = Array.from({ length: Math.floor((22 * dayMs) / (53 * 60_000)) }, (_, i) => i).filter((i) => (i * 5) % 13 !== 0)

const span = (projectId: string, i: number): SpanInsert => chatSpan({
  projectId, i, startMs: start + i * 53 * 60_000, durationMs: 80 + ((i * 71) % 2900), failed: i % 6 === 0, inputTokens: 10 + (i % 9),
  costUsd: (i % 17) / 100, sessionId: `s-${Math.floor(i / 4)}`, userId: `u-${(i * 7) % 67}`,
})

const byGroup = (series: Awaited<ReturnType<typeof metricSeries>>['series']) => Object.fromEntries(series.map((s) => [s.group ?? 'none', s.points.map((p) => p.value)]))

// Windows of whole six hours (a series starts at a whole point) ending on an hour: a partial day
// and week at each end (read inside, or as the whole less what lies outside), whole weeks within;
// and one of days alone.
const WINDOWS: Array<[number, number]> = [
  [monday + 6 * hourMs, monday + 20 * dayMs + 22 * hourMs],
  [monday - dayMs + 18 * hourMs, monday + 14 * dayMs + 2 * hourMs],
  [monday, monday + 14 * dayMs],
  [monday + 2 * dayMs + 6 * hourMs, monday + 5 * dayMs],
]

for (const engine of engines) {
  describe(`users ranked over weeks on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open())
      await sql`insert into teams (id, name) values ('t', 't')`.execute(db)
      await sql`insert into projects (id, team_id, name) values ('weeks', 't', 'weeks')`.execute(db)
      await storeSpans(db, TRACES.map((i) => span('weeks', i)))
      await summariseAll(db)
    })
    after(() => drop())

    it('keeps by user the same groups, with the same points, as the summaries keep', async () => {
      const { rows } = await sql<{ weeks: number }>`select count(distinct week)::int as weeks from user_week_figures where project_id = 'weeks'`.execute(db)
      assert.equal(rows[0]?.weeks, 4)
      for (const [from, to] of WINDOWS) {
        for (const metric of ['traces', 'cost', 'error_rate', 'tokens', 'spans'] satisfies Metric[]) {
          for (const granularitySeconds of [6 * 3600, 86_400]) {
            const query = { projectId: 'weeks', metric, groupBy: 'user' as const, granularitySeconds }
            const label = `${metric} from ${new Date(from).toISOString()} to ${new Date(to).toISOString()} every ${granularitySeconds} s`
            // The same window but for its last millisecond (no trace starts in it) is read from the summaries.
            const fromRollups = byGroup((await metricSeries(db, { ...query, from: new Date(from), to: new Date(to) })).series)
            const fromSummaries = byGroup((await metricSeries(db, { ...query, from: new Date(from), to: new Date(to - 1) })).series)
            assert.equal(Object.keys(fromRollups).length, MAX_SERIES_GROUPS, label)
            assert.deepEqual(Object.keys(fromRollups).sort(), Object.keys(fromSummaries).sort(), `${label}: groups`)
            if (metric !== 'cost') assert.deepEqual(Object.keys(fromRollups), Object.keys(fromSummaries), `${label}: their order`)
            for (const [group, points] of Object.entries(fromSummaries)) {
              points.forEach((value, i) => {
                const got = fromRollups[group]?.[i] ?? null
                assert.ok(value === null ? got === null : got !== null && Math.abs(got - value) < 1e-9, `${label}, ${group} at ${i}: ${got} ≠ ${value}`)
              })
            }
          }
        }
      }
    })

    it("ranks users' percentiles over weeks as their hourly rows' histograms give them", async () => {
      for (const [from, to] of WINDOWS) {
        const { rows } = await sql<{ hour: Date; value: string; lo: number; counts: number[] }>`
          select hour, value, array_lower(durations, 1) as lo, durations[array_lower(durations, 1):array_upper(durations, 1)] as counts
          from usage_rollups where project_id = 'weeks' and dimension = 'user' and hour >= ${new Date(from)} and hour < ${new Date(to)} and cardinality(durations) > 0`.execute(db)
        const histograms = new Map<string, Map<number, number>>()
        const add = (key: string, row: (typeof rows)[number]) => addHistogram(histograms, key, row)
        for (const row of rows) {
          add(`${Math.floor((row.hour.getTime() - from) / (6 * hourMs))}/${row.value}`, row)
          add(`window/${row.value}`, row)
        }
        const values = [...new Set(rows.map((row) => row.value))]
        for (const [metric, q] of [['latency_p50', 0.5], ['latency_p99', 0.99]] as const) {
          const { series } = await metricSeries(db, { projectId: 'weeks', metric, groupBy: 'user', from: new Date(from), to: new Date(to), granularitySeconds: 6 * 3600 })
          const ranked = values.map((value) => ({ value, figure: histogramPercentileMs(histograms.get(`window/${value}`)!, q) ?? 0 }))
            .sort((a, b) => b.figure - a.figure || (a.value < b.value ? -1 : 1)).slice(0, MAX_SERIES_GROUPS).map(({ value }) => value)
          assert.deepEqual(series.map(({ group }) => group), ranked, `${metric} from ${new Date(from).toISOString()}: the groups kept, in order`)
          for (const { group, points } of series) {
            points.forEach((point, bucket) => {
              const histogram = histograms.get(`${bucket}/${group}`)
              assert.equal(point.value, histogram === undefined ? null : histogramPercentileMs(histogram, q), `${metric} of ${group} at ${bucket}`)
            })
          }
        }
      }
    })

    it('holds in a row of the week what the rows of its days hold, through the check and retention', async () => {
      assert.deepEqual(await summaryMismatches(db, 'weeks'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      // A figure off in a row of the week, or a duration in another bucket, is a mismatch.
      const tamper = (change: ReturnType<typeof sql>) =>
        sql`update user_week_figures set ${change} where project_id = 'weeks' and week = ${new Date(monday + 7 * dayMs)} and user_id = 'u-7'`.execute(db)
      await tamper(sql`cost_usd = cost_usd + 0.01`)
      assert.equal((await summaryMismatches(db, 'weeks')).rollups, 1)
      await tamper(sql`cost_usd = cost_usd - 0.01, durations = tracewell_histogram_add(durations, ('[' || array_lower(durations, 1) || ':' || array_lower(durations, 1) || ']={1}')::integer[], 1)`)
      assert.ok((await summaryMismatches(db, 'weeks')).rollups > 0)
      await tamper(sql`durations = tracewell_histogram_add(durations, ('[' || array_lower(durations, 1) || ':' || array_lower(durations, 1) || ']={1}')::integer[], -1)`)
      assert.deepEqual(await summaryMismatches(db, 'weeks'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      // Retention of a window's summaries takes their days' rows back from their weeks' rows (the trigger).
      const weekOf = (weekStart: number) => sql<{ traces: number }>`
        select coalesce(sum(traces), 0)::int as traces from user_week_figures where project_id = 'weeks' and week = ${new Date(weekStart)}`.execute(db)
      const before = (await weekOf(monday)).rows[0]!.traces
      await deleteSummariesOfWindow(db, 'weeks', { from: null, to: new Date(monday + 3 * dayMs) })
      const { rows: left } = await sql<{ traces: number }>`
        select coalesce(sum(traces), 0)::int as traces from usage_rollups where project_id = 'weeks' and dimension = 'user.day'
          and hour >= ${new Date(monday)} and hour < ${new Date(monday + 7 * dayMs)}`.execute(db)
      assert.ok(left[0]!.traces < before && left[0]!.traces > 0)
      assert.equal((await weekOf(monday)).rows[0]!.traces, left[0]!.traces)
      assert.equal((await weekOf(monday - 7 * dayMs)).rows[0]!.traces, 0)
    })
  })
}
