import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { deleteSummariesOfWindow, metricSeries, sql, type Db, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeSpans, summariseAll, summaryMismatches } from '../src/index.ts'

// Distinct users in points narrower than a day, counted from the hours of their rows of the day
// (migration 2026-12-06T1621, user-hour-cells.ts), as the summaries count them; the hours kept
// through a trace that moves hour and retention, and compared by the check.

const ms = 1_000_000n
const day0 = Date.parse('2026-03-01T00:00:00Z')
const hourMs = 3_600_000
const dayMs = 86_400_000

// 300 one-span traces 11 minutes apart (two days and a bit): 37 users, each active in some hours only.
const TRACES = Array.from({ length: 300 }, (_, i) => i).filter((i) => (i * 5) % 7 !== 0)

function span(i: number): SpanInsert {
  const start = BigInt(day0 + i * 11 * 60_000) * ms
  const duration = BigInt(100 + ((i * 31) % 500)) * ms
  return {
    projectId: 'hours', traceId: i.toString(16).padStart(32, '0'), spanId: '1'.padStart(16, '0'), parentSpanId: null,
    name: 'op', kind: 1, startTimeUnixNano: String(start), endTimeUnixNano: String(start + duration), durationNs: String(duration), traceState: null,
    statusCode: 0, statusMessage: null, serviceName: 'api', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: 'openai', llmModel: 'gpt-4o', llmRequestType: 'chat', inputTokens: 10, outputTokens: 5, totalTokens: null, totalCostUsd: 0.01,
    sessionId: `s-${Math.floor(i / 4)}`, userId: `u-${(i * i) % 37}`, resourceAttributes: {}, events: [], links: [], attributes: {},
  }
}

for (const engine of engines) {
  describe(`users by the hours of their rows of the day on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open())
      await sql`insert into teams (id, name) values ('t', 't')`.execute(db)
      await sql`insert into projects (id, team_id, name) values ('hours', 't', 'hours')`.execute(db)
      await storeSpans(db, TRACES.map(span))
      await summariseAll(db)
    })
    after(() => drop())

    const users = async (from: number, to: number, granularitySeconds: number) =>
      (await metricSeries(db, { projectId: 'hours', metric: 'users', from: new Date(from), to: new Date(to), granularitySeconds })).series[0]?.points.map((p) => p.value)

    /** Points of 1, 2, 3, 6 and 12 hours from the rows (whole hours) and from the summaries (the window but its last millisecond). */
    const compare = async (windows: Array<[number, number]>) => {
      for (const [from, to] of windows) {
        for (const hours of [1, 2, 3, 6, 12]) {
          assert.deepEqual(await users(from, to, hours * 3600), await users(from, to - 1, hours * 3600), `every ${hours} h from ${new Date(from).toISOString()} to ${new Date(to).toISOString()}`)
        }
      }
    }

    it('counts the users of points of whole hours from their rows of the day, as the summaries count them', async () => {
      assert.deepEqual(await summaryMismatches(db, 'hours'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      // Whole days; a start and an end within a day (the last point cut by the window's end).
      await compare([[day0, day0 + 3 * dayMs], [day0 + 12 * hourMs, day0 + dayMs + 15 * hourMs]])
      const points = await users(day0, day0 + dayMs, 6 * 3600)
      assert.ok(points !== undefined && points.length === 4 && points.every((n) => (n ?? 0) > 0), JSON.stringify(points))
    })

    it('reads the hours, which the check compares with the hourly rows', async () => {
      // A user without a trace in the day's first three hours, made to have one at 02:00 in their row of the day alone.
      const { rows: [quiet] } = await sql<{ value: string }>`
        select value from usage_rollups where project_id = 'hours' and dimension = 'user.day' and hour = ${new Date(day0)}
          and hours[1] = 0 and hours[2] = 0 and hours[3] = 0 order by value limit 1`.execute(db)
      const tamper = (change: number) => sql`
        update usage_rollups set hours[3] = hours[3] + ${change}
        where project_id = 'hours' and dimension = 'user.day' and hour = ${new Date(day0)} and value = ${quiet!.value}`.execute(db)
      const before = await users(day0, day0 + dayMs, 3 * 3600)
      await tamper(1)
      assert.equal((await users(day0, day0 + dayMs, 3 * 3600))?.[0], (before?.[0] ?? 0) + 1)
      assert.equal((await summaryMismatches(db, 'hours')).rollups, 1)
      await tamper(-1)
      assert.deepEqual(await summaryMismatches(db, 'hours'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
    })

    it('keeps the hours through a trace that moves hour and through retention', async () => {
      // A span of trace 140 (day 1, 01:40) stored later, starting two hours earlier.
      const moved = span(140)
      await storeSpans(db, [{ ...moved, spanId: '2'.padStart(16, '0'), startTimeUnixNano: String(BigInt(moved.startTimeUnixNano) - 2n * BigInt(hourMs) * ms) }])
      await summariseAll(db)
      assert.deepEqual(await summaryMismatches(db, 'hours'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      await compare([[day0, day0 + 3 * dayMs]])
      await sql`delete from spans where project_id = 'hours' and start_time < ${new Date(day0 + dayMs)}`.execute(db)
      await deleteSummariesOfWindow(db, 'hours', { from: null, to: new Date(day0 + dayMs) })
      assert.equal((await summaryMismatches(db, 'hours')).rollups, 0)
      await compare([[day0 + dayMs, day0 + 3 * dayMs]])
    })
  })
}
