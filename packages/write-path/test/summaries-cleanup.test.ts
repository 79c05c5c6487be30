import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { defaultPartitionName, createProject, createTeam, deleteOldestSpansBefore, deleteSummariesOfWindow, sql, type Db, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeAndSummarise } from './support/store-and-summarise.ts'

const second = 1_000_000_000n
const minute = 60n * second
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z
const at = (minutes: number) => new Date(Number((t0 + BigInt(minutes) * minute) / 1_000_000n))

// Generated, for projects p and q alike: six traces, trace t starting t × 30 minutes after
// 00:00 with a root and a child a second later, each span 2 s long, in session s⌊t/2⌋, calling
// gpt-4o. So trace t's summary starts at minute 30t, session s's last trace ends 60s + 30
// minutes and 3 s in, and the hours 00:00, 01:00 and 02:00 have two traces each: eight rollup
// rows an hour (all, model, vendor, service and user, and the whole traces' session, prompt and
// tag, the last two under '' as they name none). The rows of the day (its users and sessions) go
// with the day: dashboard-rollups.test.ts.
function spansOf(projectId: string): SpanInsert[] {
  return Array.from({ length: 6 }, (_, t) => [0n, 1n].map((child) => {
    const startNs = t0 + BigInt(t * 30) * minute + child * second
    return {
      projectId, traceId: t.toString(16).padStart(32, '0'), spanId: String(child + 1n).padStart(16, '0'),
      parentSpanId: child ? '0000000000000001' : null, name: 'chat', kind: 3,
      startTimeUnixNano: String(startNs), endTimeUnixNano: String(startNs + 2n * second), durationNs: String(2n * second),
      traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
      llmVendor: 'openai', llmModel: 'gpt-4o', llmRequestType: 'chat', inputTokens: 10, outputTokens: 5, totalTokens: 15,
      sessionId: `s${Math.floor(t / 2)}`, userId: 'u', attributes: {}, resourceAttributes: {}, events: [], links: [],
    } satisfies SpanInsert
  })).flat()
}

async function left(db: Db, projectId: string) {
  const traces = await sql<{ trace_id: string }>`select trace_id from trace_summaries where project_id = ${projectId} order by 1`.execute(db)
  const sessions = await sql<{ session_id: string }>`select session_id from session_summaries where project_id = ${projectId} order by 1`.execute(db)
  const hours = await sql<{ hour: Date; rows: number }>`
    select hour, count(*)::int as rows from usage_rollups where project_id = ${projectId} and dimension not in ('user.day', 'session.day')
    group by 1 order by 1`.execute(db)
  return {
    traces: traces.rows.map((row) => Number.parseInt(row.trace_id, 16)),
    sessions: sessions.rows.map((row) => row.session_id),
    hours: hours.rows.map((row) => `${row.hour.toISOString().slice(11, 16)} ×${row.rows}`),
  }
}

for (const engine of engines) {
  describe(`deleting the summaries of deleted spans on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('deletes, window by window, exactly the traces, sessions and hours whose spans are all gone', async () => {
      await storeAndSummarise(db, [...spansOf('p'), ...spansOf('q')])
      // One row an hour for each dimension (all, model, vendor, service, user, session, prompt, tag, shape).
      const everything = { traces: [0, 1, 2, 3, 4, 5], sessions: ['s0', 's1', 's2'], hours: ['00:00 ×9', '01:00 ×9', '02:00 ×9'] }
      assert.deepEqual(await left(db, 'p'), everything)

      // The janitor's first batch deletes the spans before 01:00: traces 0 and 1, whose session s0
      // ended at 00:30:03, and the hour 00:00. Trace 2 starts at 01:00 exactly and is kept.
      await deleteSummariesOfWindow(db, 'p', { from: null, to: at(60) })
      assert.deepEqual(await left(db, 'p'), { traces: [2, 3, 4, 5], sessions: ['s1', 's2'], hours: ['01:00 ×9', '02:00 ×9'] })

      // The next, to 02:30: traces 2 to 4, session s1 (ended 01:30:03), the hour 01:00 (ended by
      // 02:30); the hour 02:00 still holds trace 5's spans, and s2 too.
      await deleteSummariesOfWindow(db, 'p', { from: at(60), to: at(150) })
      assert.deepEqual(await left(db, 'p'), { traces: [5], sessions: ['s2'], hours: ['02:00 ×9'] })

      assert.deepEqual(await left(db, 'q'), everything, 'another project keeps all of its rows')
    })

    it("deletes the scores of the traces and sessions it deletes, and keeps the others'", async () => {
      const team = await createTeam(db, { name: 'scored' })
      await createProject(db, { teamId: team.id, name: 'scored', id: 'scored' })
      await storeAndSummarise(db, spansOf('scored'))
      const score = (id: string, subject: { trace_id?: string; session_id?: string }) =>
        sql`insert into scores (project_id, id, trace_id, session_id, name, data_type, value, source)
          values ('scored', ${id}, ${subject.trace_id ?? null}, ${subject.session_id ?? null}, 'quality', 'numeric', 1, 'api')`.execute(db)
      const trace = (t: number) => t.toString(16).padStart(32, '0')
      await score('old trace', { trace_id: trace(0) })
      await score('old span', { trace_id: trace(1) })
      await score('old session', { session_id: 's0' })
      await score('kept trace', { trace_id: trace(2) })
      await score('kept session', { session_id: 's1' })
      await deleteSummariesOfWindow(db, 'scored', { from: null, to: at(60) })
      const kept = await sql<{ id: string }>`select id from scores where project_id = 'scored' order by id`.execute(db)
      assert.deepEqual(kept.rows.map((row) => row.id), ['kept session', 'kept trace'])
    })

    it('names where the deleted spans end, so the windows follow the spans', async () => {
      const cutoff = at(100)
      const first = await deleteOldestSpansBefore(db, defaultPartitionName('spans'), 'q', cutoff, 5)
      // Spans in start order: 00:00:00, 00:00:01, 00:30:00, 00:30:01, 01:00:00 (trace 2's root).
      assert.deepEqual(first, { deleted: 5, latestStart: at(60) })
      // From there on: the walk starts at the latest start deleted, past the spans already gone.
      const rest = await deleteOldestSpansBefore(db, defaultPartitionName('spans'), 'q', cutoff, 5, first.latestStart)
      // Trace 2's child and trace 3's two spans; trace 4 starts at 02:00, after the cutoff.
      assert.deepEqual(rest, { deleted: 3, latestStart: new Date(at(90).getTime() + 1000) })
    })
  })
}
