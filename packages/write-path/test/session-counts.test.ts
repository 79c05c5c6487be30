import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { metricSeries, metricValue, sql, type Db, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeSpans, summariseAll, summaryMismatches } from '../src/index.ts'

// Distinct sessions counted from their rows in session_figures, those that span hours from their
// hourly rows (session-count-cells.ts), as the summaries count them.

const ms = 1_000_000n
const day0 = Date.parse('2026-04-01T00:00:00Z')
const hourMs = 3_600_000
const dayMs = 86_400_000

// 260 one-span traces 13 minutes apart (two days and a bit), in sessions of one to five traces
// (some across hours, a few across midnight); and a session of two traces 30 hours apart.
function span(i: number): SpanInsert {
  const start = BigInt(day0 + i * 13 * 60_000) * ms
  return {
    projectId: 'sessions', traceId: i.toString(16).padStart(32, '0'), spanId: '1'.padStart(16, '0'), parentSpanId: null,
    name: 'op', kind: 1, startTimeUnixNano: String(start), endTimeUnixNano: String(start + 200n * ms), durationNs: String(200n * ms), traceState: null,
    statusCode: 0, statusMessage: null, serviceName: 'api', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null, totalCostUsd: null,
    sessionId: i % 17 === 0 ? null : `s-${Math.floor(i / (1 + (i % 5)))}`, userId: `u-${i % 7}`, resourceAttributes: {}, events: [], links: [], attributes: {},
  }
}
const SPANS = [...Array.from({ length: 260 }, (_, i) => span(i)), { ...span(3), traceId: 'f'.repeat(32), startTimeUnixNano: String(BigInt(day0 + 30 * hourMs + 5 * 60_000) * ms), endTimeUnixNano: String(BigInt(day0 + 30 * hourMs + 6 * 60_000) * ms) }]

// Around the settled hours' end, which the fold moves to the start of its UTC day (migration
// 2026-12-06T1600): a session on both sides of it, one after it only, and one after it in two hours.
const today = Math.floor(Date.now() / dayMs) * dayMs
const around = ([[-30, 'cross'], [2 * 60 + 5, 'cross'], [3 * 60, 'new'], [3 * 60 + 10, 'new'], [5 * 60, 'two-hours'], [6 * 60 + 1, 'two-hours']] as const)
  .map(([minutes, session], i) => {
    const start = BigInt(today + minutes * 60_000) * ms
    return { ...span(i), traceId: `e${i.toString(16).padStart(31, '0')}`, sessionId: session, startTimeUnixNano: String(start), endTimeUnixNano: String(start + 200n * ms) }
  })
SPANS.push(...around)

for (const engine of engines) {
  describe(`sessions counted from their rows on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open())
      await sql`insert into teams (id, name) values ('t', 't')`.execute(db)
      await sql`insert into projects (id, team_id, name) values ('sessions', 't', 'sessions')`.execute(db)
      await storeSpans(db, SPANS)
      await summariseAll(db)
    })
    after(() => drop())

    const sessions = async (from: number, to: number, granularitySeconds?: number) => granularitySeconds === undefined
      ? [await metricValue(db, { projectId: 'sessions', metric: 'sessions', from: new Date(from), to: new Date(to) })]
      : (await metricSeries(db, { projectId: 'sessions', metric: 'sessions', from: new Date(from), to: new Date(to), granularitySeconds })).series[0]?.points.map((p) => p.value)

    it('counts the sessions of each point as the summaries count them', async () => {
      assert.deepEqual(await summaryMismatches(db, 'sessions'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from session_figures where project_id = 'sessions' and last_hour > first_hour`.execute(db)
      assert.ok((rows[0]?.n ?? 0) >= 10, `sessions across hours: ${rows[0]?.n}`)
      for (const [from, to] of [[day0, day0 + 3 * dayMs], [day0 + 5 * hourMs, day0 + 2 * dayMs + 7 * hourMs]] as const) {
        for (const granularity of [undefined, 3600, 3 * 3600, 6 * 3600, 86_400]) {
          assert.deepEqual(await sessions(from, to, granularity), await sessions(from, to - 1, granularity), `every ${granularity} s from ${new Date(from).toISOString()}`)
        }
      }
    })

    it('counts the sessions after the settled hours from their hourly rows, once a point', async () => {
      const { rows: [settled] } = await sql<{ settled_until: Date }>`select settled_until from session_figures_settled`.execute(db)
      assert.equal(settled?.settled_until.getTime(), today)
      for (const [from, to] of [[today - dayMs, today + dayMs], [today - 12 * hourMs, today + 12 * hourMs], [today + hourMs, today + 7 * hourMs]] as const) {
        for (const granularity of [undefined, 3600, 6 * 3600, 86_400]) {
          assert.deepEqual(await sessions(from, to, granularity), await sessions(from, to - 1, granularity), `every ${granularity} s from ${new Date(from).toISOString()}`)
        }
      }
      assert.deepEqual(await sessions(today - 12 * hourMs, today + 12 * hourMs), [3])
    })

    it('counts a session in its first hour by its row in session_figures, unless that row spans hours', async () => {
      const hourly = () => sessions(day0, day0 + 3 * dayMs, 3600)
      const before = await hourly()
      // A session across hours made to look as if within its first: no longer counted in its last hour.
      const { rows: [spanning] } = await sql<{ session_id: string; last_hour: Date }>`
        select session_id, last_hour from session_figures where project_id = 'sessions' and last_hour > first_hour order by session_id limit 1`.execute(db)
      await sql`update session_figures set last_hour = first_hour where project_id = 'sessions' and session_id = ${spanning!.session_id}`.execute(db)
      const last = (spanning!.last_hour.getTime() - day0) / hourMs
      assert.equal((await hourly())?.[last], (before?.[last] ?? 0) - 1)
      assert.equal((await summaryMismatches(db, 'sessions')).rollups, 1)
      await sql`update session_figures set last_hour = ${spanning!.last_hour} where project_id = 'sessions' and session_id = ${spanning!.session_id}`.execute(db)
      assert.deepEqual(await hourly(), before)
    })
  })
}
