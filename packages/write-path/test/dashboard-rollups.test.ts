import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { deleteSummariesOfWindow, histogramPercentileMs, MAX_SERIES_GROUPS, metricSeries, metricValue, sql, type Db, type Metric, type MetricGroup, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeSpans, summariseAll, summaryMismatches } from '../src/index.ts'
import { chatSpan } from './support/chat-span.ts'
import { addHistogram } from './support/histogram-sums.ts'

// What dashboards read at scale (issue 45 §3): the 50 groups a grouping by user or session keeps,
// chosen where the rows are; percentiles computed there; users and sessions over whole days from
// the rows of the day (migration 2026-12-06T0710) and those rows kept through writes and retention
// (erasure: erasure.test.ts, whose from-scratch comparison covers them).

const ms = 1_000_000n
const day0 = Date.parse('2026-01-01T00:00:00Z')
const hourMs = 3_600_000
const dayMs = 86_400_000

// 420 one-span traces 7 minutes apart (two days and a bit): 61 users with uneven counts (every
// 11th trace left out), sessions of three traces, one in five failing, durations and costs varied.
const TRACES = Array.from({ length: 420 }, (_, i) => i).filter((i) => (i * 7) % 11 !== 0)

const span = (projectId: string, i: number): SpanInsert => chatSpan({
  projectId, i, startMs: day0 + i * 7 * 60_000, durationMs: 100 + ((i * 53) % 900), failed: i % 5 === 0, inputTokens: 10 + (i % 7),
  costUsd: (i % 13) / 100, sessionId: `s-${Math.floor(i / 3)}`, userId: `u-${i % 61}`,
})

/** A series by group: group → points. */
const byGroup = (series: Awaited<ReturnType<typeof metricSeries>>['series']) => Object.fromEntries(series.map((s) => [s.group ?? 'none', s.points.map((p) => p.value)]))

for (const engine of engines) {
  describe(`dashboards' rollup reads on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open())
      await sql`insert into teams (id, name) values ('t', 't')`.execute(db)
      await sql`insert into projects (id, team_id, name) values ('dash', 't', 'dash'), ('gone', 't', 'gone')`.execute(db)
      await storeSpans(db, [...TRACES.map((i) => span('dash', i)), ...TRACES.map((i) => span('gone', i))])
      await summariseAll(db)
    })
    after(() => drop())

    it('keeps by user and by session the same 50 groups, with the same points, as the summaries keep', async () => {
      // Whole hours from the rollups; the same window but for its last millisecond (no trace starts in it) from the summaries.
      // Whole days (a user's ranked from their rows of the day), and a day between hours (ranked from both).
      for (const [from, to] of [[day0, day0 + 2 * dayMs], [day0 + 5 * hourMs, day0 + 2 * dayMs + hourMs]] as const) {
        const rolled = { from: new Date(from), to: new Date(to) }
        const exact = { from: new Date(from), to: new Date(to - 1) }
        for (const groupBy of ['user', 'session'] satisfies MetricGroup[]) {
          for (const metric of ['traces', 'cost', 'error_rate', 'tokens'] satisfies Metric[]) {
            for (const granularitySeconds of [3600, 6 * 3600]) {
              const query = { projectId: 'dash', metric, groupBy, granularitySeconds }
              const [fromRollups, fromSummaries] = [byGroup((await metricSeries(db, { ...query, ...rolled })).series), byGroup((await metricSeries(db, { ...query, ...exact })).series)]
              assert.equal(Object.keys(fromRollups).length, MAX_SERIES_GROUPS, `${metric} by ${groupBy}`)
              // The groups kept; and their order where the totals are whole numbers (sums of decimals
              // are added in the order rows come, which may part equal totals by a last bit).
              assert.deepEqual(Object.keys(fromRollups).sort(), Object.keys(fromSummaries).sort(), `${metric} by ${groupBy} every ${granularitySeconds} s: groups`)
              if (metric === 'traces' || metric === 'tokens') assert.deepEqual(Object.keys(fromRollups), Object.keys(fromSummaries), `${metric} by ${groupBy} every ${granularitySeconds} s: their order`)
              for (const [group, points] of Object.entries(fromSummaries)) {
                points.forEach((value, i) => {
                  const got = fromRollups[group]?.[i] ?? null
                  assert.ok(value === null ? got === null : got !== null && Math.abs(got - value) < 1e-9, `${metric} by ${groupBy}, ${group} at ${i}: ${got} ≠ ${value}`)
                })
              }
            }
          }
        }
      }
    })

    it('ranks the groups of a rate by its figure over the window, from the rollups as from the summaries', async () => {
      // The error rate over the window by user, as the summaries count it: the 50 highest, ties in code point order.
      const { rows } = await sql<{ user_id: string }>`
        select user_id from trace_summaries where project_id = 'dash' group by user_id
        order by avg((error_count > 0)::int)::float8 desc, user_id collate "C" limit ${MAX_SERIES_GROUPS}`.execute(db)
      const expected = rows.map((row) => row.user_id)
      for (const [from, to] of [[day0, day0 + 2 * dayMs + hourMs], [day0, day0 + 2 * dayMs + hourMs - 1]] as const) {
        const { series } = await metricSeries(db, { projectId: 'dash', metric: 'error_rate', groupBy: 'user', from: new Date(from), to: new Date(to), granularitySeconds: 6 * 3600 })
        assert.deepEqual(series.map((s) => s.group), expected, `to ${new Date(to).toISOString()}`)
      }
    })

    it("holds in a user's row of the day what their hourly rows of the day hold, which the check compares", async () => {
      const { rows } = await sql<{ differing: number; days: number }>`
        with h as (
          select date_trunc('day', hour, 'UTC') as hour, value, sum(traces)::int as traces, sum(error_traces)::int as error_traces, sum(spans)::int as spans,
            sum(input_tokens)::int as input_tokens, sum(cost_usd) as cost_usd
          from usage_rollups where project_id = 'dash' and dimension = 'user' group by 1, 2
        )
        select (count(*) filter (where (h.traces, h.error_traces, h.spans, h.input_tokens, h.cost_usd) is distinct from (d.traces, d.error_traces, d.spans, d.input_tokens::int, d.cost_usd)))::int as differing,
          (count(distinct d.hour))::int as days
        from h full join (select * from usage_rollups where project_id = 'dash' and dimension = 'user.day') d using (hour, value)`.execute(db)
      assert.deepEqual(rows, [{ differing: 0, days: 3 }])
      assert.deepEqual(await summaryMismatches(db, 'dash'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      // A figure off in a row of the day, or a trace's duration in another bucket, is a mismatch.
      const day = { project: 'dash', user: 'u-7', day: new Date(day0 + dayMs) }
      const tamper = (change: ReturnType<typeof sql>) =>
        sql`update usage_rollups set ${change} where project_id = ${day.project} and dimension = 'user.day' and hour = ${day.day} and value = ${day.user}`.execute(db)
      await tamper(sql`cost_usd = cost_usd + 0.01`)
      assert.equal((await summaryMismatches(db, 'dash')).rollups, 1)
      await tamper(sql`cost_usd = cost_usd - 0.01, durations = tracewell_histogram_add(durations, ('[' || array_lower(durations, 1) + 1 || ':' || array_lower(durations, 1) + 1 || ']={1}')::integer[], 1)`)
      assert.ok((await summaryMismatches(db, 'dash')).rollups > 0)
      await tamper(sql`durations = tracewell_histogram_add(durations, ('[' || array_lower(durations, 1) + 1 || ':' || array_lower(durations, 1) + 1 || ']={1}')::integer[], -1)`)
      assert.deepEqual(await summaryMismatches(db, 'dash'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
    })

    it('computes percentiles as histogramPercentileMs does, to the last bit', async () => {
      const window = { from: new Date(day0), to: new Date(day0 + dayMs) }
      // Points of an hour (a row each: a user's of one trace, a session's of up to three), of six
      // hours (rows summed) and of the whole day; groups ranked by their figure over the day (a
      // user's from their row of the day). Wider than an hour, a value whose rows all hold one and
      // the same duration bucket takes a shortcut; the others are summed bucket by bucket.
      for (const [dimension, hours] of [['user', 1], ['user', 6], ['user', 24], ['session', 1], ['session', 6], ['session', 24]] as const) {
        const { rows } = await sql<{ hour: Date; value: string; lo: number; counts: number[] }>`
          select hour, value, array_lower(durations, 1) as lo, durations[array_lower(durations, 1):array_upper(durations, 1)] as counts
          from usage_rollups where project_id = 'dash' and dimension = ${dimension} and hour >= ${window.from} and hour < ${window.to} and cardinality(durations) > 0`.execute(db)
        // The hourly rows' histograms summed by point and value, and by value over the window, here.
        const histograms = new Map<string, Map<number, number>>()
        const add = (key: string, row: (typeof rows)[number]) => addHistogram(histograms, key, row)
        for (const row of rows) {
          add(`${Math.floor((row.hour.getTime() - day0) / (hours * hourMs))}/${row.value}`, row)
          add(`window/${row.value}`, row)
        }
        const values = [...new Set(rows.map((row) => row.value))]
        const oneBucket = values.filter((value) => [...histograms.get(`window/${value}`)!.values()].filter((n) => n > 0).length === 1)
        if (dimension === 'session') assert.ok(oneBucket.length >= 5 && values.length - oneBucket.length >= 5, `sessions of one duration bucket over the day, and of more: ${oneBucket.length} of ${values.length}`)
        for (const [metric, q] of [['latency_p50', 0.5], ['latency_p95', 0.95], ['latency_p99', 0.99]] as const) {
          const { series } = await metricSeries(db, { projectId: 'dash', metric, groupBy: dimension, ...window, granularitySeconds: hours * 3600 })
          const overWindow = values.map((value) => ({ value, figure: histogramPercentileMs(histograms.get(`window/${value}`)!, q) ?? 0 }))
          const ranked = overWindow.sort((a, b) => b.figure - a.figure || (a.value < b.value ? -1 : 1)).slice(0, MAX_SERIES_GROUPS).map(({ value }) => value)
          assert.deepEqual(series.map(({ group }) => group), ranked, `${metric} of ${dimension} every ${hours} h: the groups kept, in order`)
          for (const { group, points } of series) {
            points.forEach((point, bucket) => {
              const histogram = histograms.get(`${bucket}/${group}`)
              assert.equal(point.value, histogram === undefined ? null : histogramPercentileMs(histogram, q), `${metric} of ${dimension} ${group} at ${bucket} of ${hours} h`)
            })
          }
        }
      }
    })

    it('counts users and sessions over whole days from the rows of the day, as the summaries count them', async () => {
      const count = async (metric: Metric, from: number, to: number, granularitySeconds?: number) => {
        if (granularitySeconds === undefined) return [await metricValue(db, { projectId: 'dash', metric, from: new Date(from), to: new Date(to) })]
        return (await metricSeries(db, { projectId: 'dash', metric, from: new Date(from), to: new Date(to), granularitySeconds })).series[0]?.points.map((p) => p.value)
      }
      // Windows of whole hours (the rollups) and the same but for their last millisecond (the summaries):
      // a partial day at each end, whole days within, and points of a day, of six hours, of an hour.
      const cases: Array<[number, number, number | undefined]> = [
        [day0 + 5 * hourMs, day0 + 2 * dayMs + 3 * hourMs, undefined],
        [day0, day0 + 2 * dayMs, undefined],
        [day0, day0 + 3 * dayMs, 86_400],
        [day0 + 5 * hourMs, day0 + 2 * dayMs + 5 * hourMs, 86_400],
        [day0, day0 + 2 * dayMs, 6 * 3600],
        [day0 + 20 * hourMs, day0 + 30 * hourMs, 3600],
      ]
      for (const metric of ['users', 'sessions'] satisfies Metric[]) {
        for (const [from, to, granularity] of cases) {
          assert.deepEqual(await count(metric, from, to, granularity), await count(metric, from, to - 1, granularity), `${metric} from ${new Date(from).toISOString()} to ${new Date(to).toISOString()} every ${granularity}`)
        }
      }
      assert.deepEqual(await count('users', day0, day0 + 2 * dayMs), [61])
    })

    it("ranks sessions from their own rows (session_figures), which the check compares", async () => {
      const window = { from: new Date(day0), to: new Date(day0 + 2 * dayMs) }
      const groups = async (projectId: string, metric: Metric, from = window.from, to = window.to) =>
        (await metricSeries(db, { projectId, metric, groupBy: 'session', from, to, granularitySeconds: 6 * 3600 })).series.map((s) => s.group)
      const kept = await groups('dash', 'cost')
      // A session inside the window and not kept, made the costliest in its row alone: kept (its
      // points, from the hourly rows, place it), and a mismatch.
      const { rows: [outside] } = await sql<{ session_id: string }>`
        select session_id from session_figures where project_id = 'dash' and first_hour >= ${window.from} and last_hour < ${window.to}
          and not (session_id = any(${kept}::text[])) order by session_id limit 1`.execute(db)
      const tamper = (change: number) => sql`update session_figures set cost_usd = cost_usd + ${change} where project_id = 'dash' and session_id = ${outside!.session_id}`.execute(db)
      await tamper(100)
      assert.ok((await groups('dash', 'cost')).includes(outside!.session_id))
      assert.equal((await summaryMismatches(db, 'dash')).rollups, 1)
      await tamper(-100)
      assert.deepEqual(await groups('dash', 'cost'), kept)
      assert.deepEqual(await summaryMismatches(db, 'dash'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })

      // Sessions that cross a window's edge by more than a day (here one of two traces 40 hours
      // apart): ranked from their hourly rows within the window, as the summaries rank them.
      await sql`insert into projects (id, team_id, name) values ('long', 't', 'long')`.execute(db)
      const late = { ...span('long', 30), traceId: 'f'.repeat(32), startTimeUnixNano: String(BigInt(day0 + 30 * 7 * 60_000 + 40 * hourMs) * ms) }
      await storeSpans(db, [...TRACES.map((i) => ({ ...span('long', i), totalCostUsd: i === 30 ? 5 : (i % 13) / 100 })), { ...late, endTimeUnixNano: String(BigInt(late.startTimeUnixNano) + 900n * ms), totalCostUsd: 7 }])
      await summariseAll(db)
      assert.deepEqual(await summaryMismatches(db, 'long'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      for (const [from, to] of [[day0, day0 + 2 * dayMs], [day0 + 5 * hourMs, day0 + 2 * dayMs + hourMs], [day0 + 20 * hourMs, day0 + 3 * dayMs]] as const) {
        for (const metric of ['cost', 'traces', 'error_rate'] satisfies Metric[]) {
          const fromRollups = await groups('long', metric, new Date(from), new Date(to))
          const fromSummaries = await groups('long', metric, new Date(from), new Date(to - 1))
          assert.deepEqual(fromRollups.slice().sort(), fromSummaries.slice().sort(), `${metric} from ${new Date(from).toISOString()}`)
        }
        // A percentile's ranking, from the window's hourly rows summed here (the summaries' percentiles
        // are exact, not of buckets); the window taken back to a whole point, as the series is.
        const start = new Date(Math.floor(from / (6 * hourMs)) * 6 * hourMs)
        const { rows } = await sql<{ value: string; lo: number; counts: number[] }>`
          select value, array_lower(durations, 1) as lo, durations[array_lower(durations, 1):array_upper(durations, 1)] as counts
          from usage_rollups where project_id = 'long' and dimension = 'session' and hour >= ${start} and hour < ${new Date(to)} and cardinality(durations) > 0`.execute(db)
        const histograms = new Map<string, Map<number, number>>()
        for (const row of rows) addHistogram(histograms, row.value, row)
        const ranked = [...histograms].map(([value, histogram]) => ({ value, figure: histogramPercentileMs(histogram, 0.95) ?? 0 }))
          .sort((a, b) => b.figure - a.figure || (a.value < b.value ? -1 : 1)).slice(0, MAX_SERIES_GROUPS).map(({ value }) => value)
        assert.deepEqual(await groups('long', 'latency_p95', new Date(from), new Date(to)), ranked, `latency_p95 from ${new Date(from).toISOString()}`)
      }
      // The long session: first by cost over the days that hold both its traces, by the later one's alone after.
      assert.equal((await groups('long', 'cost', new Date(day0), new Date(day0 + 3 * dayMs)))[0], 's-10')
      assert.equal((await groups('long', 'cost', new Date(day0 + 20 * hourMs), new Date(day0 + 3 * dayMs)))[0], 's-10')

      // Retention and erasure lower it as they lower the hourly rows (the trigger sees every change).
      // (The spans of the window go with them, so that the check recomputes from what is left.)
      await sql`delete from spans where project_id = 'long' and start_time < ${new Date(day0 + dayMs)}`.execute(db)
      await deleteSummariesOfWindow(db, 'long', { from: null, to: new Date(day0 + dayMs) })
      assert.equal((await summaryMismatches(db, 'long')).rollups, 0)
      assert.equal((await groups('long', 'cost', new Date(day0), new Date(day0 + 3 * dayMs)))[0], 's-10')
    })

    it('keeps a row of the day per user and session through writes and retention', async () => {
      // Rows a trace moved out of may stay, empty (as hours do): values are those with a trace.
      const days = async (projectId: string) => {
        const { rows } = await sql<{ dimension: string; day: string; values: number; traces: number }>`
          select dimension, to_char(hour at time zone 'UTC', 'MM-DD') as day, (count(*) filter (where traces > 0))::int as values, sum(traces)::int as traces
          from usage_rollups where project_id = ${projectId} and dimension in ('user.day', 'session.day') group by 1, 2 order by 1, 2`.execute(db)
        return rows.map((row) => `${row.dimension} ${row.day}: ${row.values} values, ${row.traces} traces`)
      }
      // The first trace of the second day; a span of it, stored later, will start on the first.
      const moved = TRACES.find((i) => i * 7 * 60_000 >= dayMs)!
      const expected = (from: number, dayOf: (i: number) => number) => {
        const perDay = [0, 1, 2].map((d) => TRACES.filter((i) => dayOf(i) === d))
        const distinct = (list: number[], of: (i: number) => string) => new Set(list.map(of)).size
        return [
          ...[0, 1, 2].slice(from).map((d) => `session.day 01-0${d + 1}: ${distinct(perDay[d]!, (i) => `s-${Math.floor(i / 3)}`)} values, ${perDay[d]!.length} traces`),
          ...[0, 1, 2].slice(from).map((d) => `user.day 01-0${d + 1}: ${distinct(perDay[d]!, (i) => `u-${i % 61}`)} values, ${perDay[d]!.length} traces`),
        ]
      }
      const dayOf = (i: number) => Math.floor((i * 7 * 60_000) / dayMs)
      const dayAfterMove = (i: number) => (i === moved ? 0 : dayOf(i))
      assert.deepEqual(await days('gone'), expected(0, dayOf))
      assert.deepEqual(await summaryMismatches(db, 'gone'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })

      // A span that moves a trace's start to the previous day moves its count there.
      await storeSpans(db, [{ ...span('gone', moved), spanId: '2'.padStart(16, '0'), startTimeUnixNano: String(BigInt(day0 + dayMs - 60_000) * ms) }])
      await summariseAll(db)
      assert.deepEqual(await summaryMismatches(db, 'gone'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      assert.deepEqual(await days('gone'), expected(0, dayAfterMove))

      // Retention takes a day's rows once its window passed the day's end, not before.
      await deleteSummariesOfWindow(db, 'gone', { from: null, to: new Date(day0 + dayMs - hourMs) })
      assert.equal((await days('gone')).length, 6)
      await deleteSummariesOfWindow(db, 'gone', { from: new Date(day0 + dayMs - hourMs), to: new Date(day0 + dayMs) })
      assert.deepEqual(await days('gone'), expected(1, dayAfterMove))
      assert.deepEqual((await days('dash')).length, 6, 'another project keeps its rows')
    })
  })
}
