import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { histogramPercentileMs, MAX_SERIES_GROUPS, metricSeries, sql, withStatementTimeout, type Db, type Metric, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeSpans, summariseAll, summaryMismatches } from '../src/index.ts'
import { addHistogram } from './support/histogram-sums.ts'

// session_figures holds the sessions' rows of the settled hours only (migration 2026-12-06T1600):
// the fold does not write it for the current day's, the dashboards read those hours from their
// hourly rows, and the boundary moves a day at a time. Sessions on both sides of it rank as the
// summaries rank them, before and after it moves.

const ms = 1_000_000n
const hourMs = 3_600_000

function span(projectId: string, at: number, i: number, session: string, cost: number): SpanInsert {
  const start = BigInt(at) * ms
  const duration = BigInt(100 + ((i * 53) % 900)) * ms
  return {
    projectId, traceId: i.toString(16).padStart(32, '0'), spanId: '1'.padStart(16, '0'), parentSpanId: null,
    name: 'op', kind: 1, startTimeUnixNano: String(start), endTimeUnixNano: String(start + duration), durationNs: String(duration), traceState: null,
    statusCode: i % 5 === 0 ? 2 : 0, statusMessage: null, serviceName: 'api', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: 'openai', llmModel: 'gpt-4o', llmRequestType: 'chat', inputTokens: 10 + (i % 7), outputTokens: 5, totalTokens: null, totalCostUsd: cost,
    sessionId: session, userId: `u-${i % 61}`, resourceAttributes: {}, events: [], links: [], attributes: {},
  }
}

const settledUntil = async (db: Db) => (await sql<{ at: Date }>`select settled_until as at from session_figures_settled`.execute(db)).rows[0]!.at.getTime()

for (const engine of engines) {
  describe(`sessions' rows of the settled hours on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    /** The settled hours' end when the test began (the start of the template's UTC day). */
    let settled: number
    before(async () => {
      ;({ db, drop } = await engine.open())
      await sql`insert into teams (id, name) values ('t', 't')`.execute(db)
      await sql`insert into projects (id, team_id, name) values ('open', 't', 'open')`.execute(db)
      settled = await settledUntil(db)
    })
    after(() => drop())

    it('ranks sessions on both sides of the boundary as the summaries rank them, before and after it moves', async () => {
      // 210 traces 7 minutes apart from 22 hours before the boundary, sessions of three, and one
      // session of two traces 7 hours apart across it, the costliest.
      const first = settled - 22 * hourMs
      const spans = Array.from({ length: 210 }, (_, i) => span('open', first + i * 7 * 60_000, i, `s-${Math.floor(i / 3)}`, (i % 13) / 100))
      spans.push(span('open', settled - 6 * hourMs + 60_000, 900, 'long', 5), span('open', settled + hourMs + 60_000, 901, 'long', 7))
      await storeSpans(db, spans)
      await summariseAll(db)
      // The sessions' rows were all made by the trigger, each marked open as it may be: marked as a
      // move of the boundary marks them, so that those of settled rows alone rank by their row.
      await sql`select tracewell_session_figures_mark_open()`.execute(db)
      // The fold wrote the settled hours' figures alone: the check compares those.
      const { rows: [long] } = await sql<{ cost: string }>`select cost_usd::text as cost from session_figures where project_id = 'open' and session_id = 'long'`.execute(db)
      assert.equal(Number(long!.cost), 5)
      assert.deepEqual(await summaryMismatches(db, 'open'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })

      const windows = [[-24, 3], [-10, 3], [-3, 3], [1, 3], [-24, -2]].map(([from, to]) => [settled + from! * hourMs, settled + to! * hourMs] as const)
      const ranked = async () => {
        const answers: Array<Array<string | null>> = []
        for (const [from, to] of windows) {
          for (const metric of ['cost', 'traces', 'error_rate', 'latency_p95'] satisfies Metric[]) {
            // As the control plane reads them: with JIT off (a plan of many partitions' lookups was compiled for seconds).
            const groups = async (end: number) => (await withStatementTimeout(db, 60_000, (executor) =>
              metricSeries(executor, { projectId: 'open', metric, groupBy: 'session', from: new Date(from), to: new Date(end), granularitySeconds: 3600 }))).series.map((s) => s.group)
            const fromRollups = await groups(to)
            answers.push(fromRollups)
            assert.ok(fromRollups.length > 0 && fromRollups.length <= MAX_SERIES_GROUPS)
            // A percentile from the window's hourly rows summed here (the summaries' are exact, not of buckets).
            const expected = metric === 'latency_p95' ? await p95Ranking(db, from, to) : (await groups(to - 1)).sort()
            assert.deepEqual(metric === 'latency_p95' ? fromRollups : fromRollups.slice().sort(), expected, `${metric} from ${(from - settled) / hourMs} h to ${(to - settled) / hourMs} h`)
          }
        }
        return answers
      }
      const before = await ranked()
      // The long session first by cost over both its traces, by its later one alone after its first.
      assert.equal(before[0]![0], 'long')
      assert.equal(before[2 * 4]![0], 'long')

      // A trace of the current day changes no session's sums (one of a session of settled rows marks
      // it open, and it is read from its hourly rows); a late one of a settled hour does.
      const rows = async () => (await sql<{ rows: string }>`select string_agg(session_id || ':' || traces || ':' || cost_usd, ',' order by session_id) as rows from session_figures where project_id = 'open'`.execute(db)).rows[0]!.rows
      const stored = await rows()
      await storeSpans(db, [span('open', settled + 2 * hourMs, 902, 's-69', 0.5), span('open', settled + 2 * hourMs + 60_000, 904, 's-10', 3)])
      await summariseAll(db)
      assert.equal(await rows(), stored)
      await storeSpans(db, [span('open', settled - 20 * hourMs, 903, 's-5', 0.25)])
      await summariseAll(db)
      assert.notEqual(await rows(), stored)
      assert.deepEqual(await summaryMismatches(db, 'open'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      const late = await ranked()

      // The boundary moved a day on: every hour is settled, the same answers.
      await sql`select tracewell_settle_session_figures(${new Date(settled + 24 * hourMs)})`.execute(db)
      assert.equal(await settledUntil(db), settled + 24 * hourMs)
      const { rows: [moved] } = await sql<{ cost: string }>`select cost_usd::text as cost from session_figures where project_id = 'open' and session_id = 'long'`.execute(db)
      assert.equal(Number(moved!.cost), 12)
      assert.deepEqual(await summaryMismatches(db, 'open'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      assert.deepEqual(await ranked(), late)
    })

    it("moves the boundary to the fold's day before it writes, which then counts in the settled rows", async () => {
      // A database of no row yet, its boundary set back a day as if migrated the day before: the
      // later day's rows settle as the fold writes them.
      const { db, drop } = await engine.open()
      after(() => drop())
      await sql`insert into teams (id, name) values ('t', 't')`.execute(db)
      await sql`insert into projects (id, team_id, name) values ('fold', 't', 'fold')`.execute(db)
      const boundary = await settledUntil(db)
      await sql`update session_figures_settled set settled_until = ${new Date(boundary - 24 * hourMs)}`.execute(db)
      await storeSpans(db, [span('fold', boundary - 2 * hourMs, 1, 'yesterday', 0.5)])
      await summariseAll(db)
      assert.equal(await settledUntil(db), boundary)
      const { rows } = await sql<{ session_id: string }>`select session_id from session_figures where project_id = 'fold'`.execute(db)
      assert.deepEqual(rows.map((row) => row.session_id), ['yesterday'])
      assert.deepEqual(await summaryMismatches(db, 'fold'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
    })
  })
}

/** The window's top sessions by latency p95 from their hourly rows' histograms, as histogramPercentileMs computes it. */
async function p95Ranking(db: Db, from: number, to: number): Promise<string[]> {
  const { rows } = await sql<{ value: string; lo: number; counts: number[] }>`
    select value, array_lower(durations, 1) as lo, durations[array_lower(durations, 1):array_upper(durations, 1)] as counts
    from usage_rollups where project_id = 'open' and dimension = 'session' and hour >= ${new Date(from)} and hour < ${new Date(to)} and cardinality(durations) > 0`.execute(db)
  const histograms = new Map<string, Map<number, number>>()
  for (const row of rows) addHistogram(histograms, row.value, row)
  return [...histograms].map(([value, histogram]) => ({ value, figure: histogramPercentileMs(histogram, 0.95) ?? 0 }))
    .sort((a, b) => b.figure - a.figure || (a.value < b.value ? -1 : 1)).slice(0, MAX_SERIES_GROUPS).map(({ value }) => value)
}
