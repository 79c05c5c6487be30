import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { MAX_SERIES_GROUPS, metricSeries, sessionMemberCells, sql, withStatementTimeout, type Db, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeSpans, summariseAll } from '../src/index.ts'
import { groupMemberMismatches } from '../src/group-member-check.ts'

// Users and sessions by session, from the 50 sessions kept and their traces only
// (session-member-cells.ts), as the summaries count every session's. A window ending one
// millisecond before the hour is read from the summaries: the two must agree point for point.

const ms = 1_000_000n
const hourMs = 3_600_000
const dayMs = 86_400_000
const day0 = Date.parse('2026-04-01T00:00:00Z')
const today = Math.floor(Date.now() / dayMs) * dayMs

function span(projectId: string, traceId: string, startMs: number, sessionId: string | null, userId: string | null, serviceName = 'api'): SpanInsert {
  const start = BigInt(startMs) * ms
  return {
    projectId, traceId, spanId: '1'.padStart(16, '0'), parentSpanId: null,
    name: 'op', kind: 1, startTimeUnixNano: String(start), endTimeUnixNano: String(start + 200n * ms), durationNs: String(200n * ms), traceState: null,
    statusCode: 0, statusMessage: null, serviceName, serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null, totalCostUsd: null,
    sessionId, userId, resourceAttributes: {}, events: [], links: [], attributes: {},
  }
}

// Session names whose code point order is not the database's default collation's ('B' before
// 'a', 'é' after 'z').
const prefixes = ['a', 'B', 'é', 'z']

/**
 * Traces of `projectId`: 400 sessions' worth 11 minutes apart (some across hours and points, one
 * across the window's edge), a session over two days, a few of Tracewell's own traces, users
 * missing from some; 60 sessions of four traces and one user (the most traces, the fewest users);
 * and sessions across the settled hours' end (today's midnight), after 60 of one trace yesterday. `withoutSession`: one trace in
 * 13 has no session, and one yesterday and one today.
 */
function traces(projectId: string, withoutSession: boolean): SpanInsert[] {
  const spans: SpanInsert[] = []
  for (let i = 0; i < 400; i++) {
    const session = withoutSession && i % 13 === 0 ? null : `${prefixes[i % 4]}-${Math.floor(i / (1 + (i % 3)))}`
    spans.push(span(projectId, `a${i.toString(16).padStart(31, '0')}`, day0 + i * 11 * 60_000, session, i % 11 === 0 ? null : `u-${i % 6}`, i % 29 === 0 ? 'tracewell' : 'api'))
  }
  for (const [k, hours] of [1, 9, 20, 40].entries()) spans.push(span(projectId, `b${k.toString(16).padStart(31, '0')}`, day0 + hours * hourMs, 'long', `u-${k}`))
  for (let s = 0; s < 60; s++) {
    for (let k = 0; k < 4; k++) spans.push(span(projectId, `c${(s * 4 + k).toString(16).padStart(31, '0')}`, day0 + 3 * dayMs + s * 20 * 60_000 + k * 60_000, `heavy-${s}`, 'u-heavy'))
  }
  // Yesterday's one-trace sessions, before 'cross' in code point order: 'cross' (across midnight) counts twice all the same.
  for (let k = 0; k < 60; k++) spans.push(span(projectId, `e${k.toString(16).padStart(31, '0')}`, today - dayMs + k * 20 * 60_000, `a-y-${String(k).padStart(2, '0')}`, 'u-7'))
  const around = [[-30, 'cross', 'u-1'], [2 * 60 + 5, 'cross', 'u-2'], [3 * 60, 'new', 'u-1'], [3 * 60 + 10, 'new', 'u-3'], [5 * 60, 'two-hours', null], [6 * 60 + 1, 'two-hours', 'u-4']] as const
  for (const [i, [minutes, session, user]] of around.entries()) spans.push(span(projectId, `d${i.toString(16).padStart(31, '0')}`, today + minutes * 60_000, session, user))
  if (withoutSession) for (const [i, minutes] of [-90, 4 * 60].entries()) spans.push(span(projectId, `f${i.toString(16).padStart(31, '0')}`, today + minutes * 60_000, null, `u-${5 + i}`))
  return spans
}

/** Windows [from, to) and widths: across the data's days, its edges, today's open hours, and all of it a day a point. */
const WINDOWS: Array<[number, number, number]> = [
  [day0, day0 + 4 * dayMs, 3600], [day0, day0 + 4 * dayMs, 6 * 3600], [day0, day0 + 4 * dayMs, 86_400],
  [day0 + 5 * hourMs, day0 + 2 * dayMs + 7 * hourMs, 3600], [day0 + 6 * hourMs, day0 + 2 * dayMs + 6 * hourMs, 3 * 3600],
  [today - dayMs, today + dayMs, 3600], [today - 12 * hourMs, today + 12 * hourMs, 6 * 3600], [day0, today + dayMs, 86_400],
]

for (const engine of engines) {
  describe(`users and sessions by session on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open())
      await sql`insert into teams (id, name) values ('t', 't')`.execute(db)
      await sql`insert into projects (id, team_id, name) values ('with-none', 't', 'with-none'), ('all-in-sessions', 't', 'all-in-sessions')`.execute(db)
      await storeSpans(db, [...traces('with-none', true), ...traces('all-in-sessions', false)])
      await summariseAll(db)
    })
    after(() => drop())

    // As the routes read (without JIT compiling, which costs seconds here and changes nothing).
    const series = (projectId: string, metric: 'users' | 'sessions', from: number, to: number, granularitySeconds: number) => withStatementTimeout(db, 60_000, (reader) =>
      metricSeries(reader, { projectId, metric, groupBy: 'session', from: new Date(from), to: new Date(to), granularitySeconds }))
    const kept = (projectId: string, metric: 'users' | 'sessions', from: number, to: number, granularitySeconds: number) => withStatementTimeout(db, 60_000, (reader) =>
      sessionMemberCells(reader, { projectId, metric, startMs: from, granularitySeconds, to: new Date(to), maxGroups: MAX_SERIES_GROUPS }))

    it('keeps the sessions the summaries keep, with the same points, each counting 1 where it has a trace', async () => {
      for (const projectId of ['with-none', 'all-in-sessions']) {
        for (const [from, to, width] of WINDOWS) {
          const what = `${projectId}, every ${width} s from ${new Date(from).toISOString()}`
          assert.notEqual(await kept(projectId, 'sessions', from, to, width), undefined, what)
          const bySession = await series(projectId, 'sessions', from, to, width)
          assert.deepEqual(bySession, await series(projectId, 'sessions', from, to - 1, width), what)
          for (const { points } of bySession.series) assert.ok(points.every((point) => point.value === 0 || point.value === 1), what)
        }
      }
      // The long session, in four points a day apart of its own, comes first; then those in two; then in one, in code point order.
      const { series: days } = await series('with-none', 'sessions', day0, day0 + 4 * dayMs, 6 * 3600)
      assert.equal(days[0]?.group, 'long')
      assert.equal(days[0]?.points.filter((point) => point.value === 1).length, 4)
      assert.equal(days.length, MAX_SERIES_GROUPS)
      const { series: aroundToday } = await series('with-none', 'sessions', today - dayMs, today + dayMs, 3600)
      assert.deepEqual(aroundToday.slice(0, 2).map(({ group, points }) => [group, points.filter((point) => point.value === 1).length]), [['cross', 2], ['two-hours', 2]])
    })

    it('counts the users of each session kept from its traces, taking more sessions while the next could still have more', async () => {
      for (const [from, to, width] of WINDOWS) {
        const what = `every ${width} s from ${new Date(from).toISOString()}`
        assert.notEqual(await kept('all-in-sessions', 'users', from, to, width), undefined, what)
        assert.deepEqual(await series('all-in-sessions', 'users', from, to, width), await series('all-in-sessions', 'users', from, to - 1, width), what)
      }
      // The 60 sessions of four traces have one user each: the first 50 by traces are not the 50 by users.
      const { series: byUsers } = await series('all-in-sessions', 'users', day0, day0 + 4 * dayMs, 6 * 3600)
      assert.ok(byUsers.every(({ group }) => !group?.startsWith('heavy-')), byUsers.map(({ group }) => group).join(' '))
    })

    it('counts the users of the traces without a session from a row a settled day, the others from the summaries', async () => {
      // Stored after the boundary passed their days, the traces left them unbuilt: built now, as the next day's settle would.
      await sql`select tracewell_rebuild_group_member_days()`.execute(db)
      const { rows: [none] } = await sql<{ n: number }>`
        select count(*)::int as n from group_member_days where project_id = 'with-none' and dimension = 'session' and value is null`.execute(db)
      assert.ok((none?.n ?? 0) >= 3, `days of traces without a session: ${none?.n}`)
      assert.equal(await groupMemberMismatches(db, 'with-none'), 0)
      for (const [from, to, width] of WINDOWS) {
        const what = `every ${width} s from ${new Date(from).toISOString()}`
        assert.notEqual(await kept('with-none', 'users', from, to, width), undefined, what)
        assert.deepEqual(await series('with-none', 'users', from, to, width), await series('with-none', 'users', from, to - 1, width), what)
      }
      const { series: byUsers } = await series('with-none', 'users', day0, day0 + 4 * dayMs, 6 * 3600)
      assert.equal(byUsers[0]?.group, null, 'the traces without a session have the most users')
      // Yesterday is not built yet: its traces without a session are read from the summaries.
      const { series: aroundToday } = await series('with-none', 'users', today - dayMs, today + dayMs, 6 * 3600)
      assert.deepEqual(aroundToday.find(({ group }) => group === null)?.points.map((point) => point.value), [0, 0, 0, 1, 1, 0, 0, 0])
    })
  })
}
