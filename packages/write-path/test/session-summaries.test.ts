import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { backfillSessionSummaries, deleteTrace, searchSessions, sql, type Db, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeAndSummarise } from './support/store-and-summarise.ts'

const second = 1_000_000_000n
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z

function span(traceId: string, spanId: string, startNs: bigint, extra: Partial<SpanInsert> = {}): SpanInsert {
  const endNs = startNs + 2n * second
  return {
    projectId: 'p', traceId, spanId, parentSpanId: null, name: 'op', kind: 1,
    startTimeUnixNano: String(startNs), endTimeUnixNano: String(endNs), durationNs: String(endNs - startNs),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    attributes: {}, resourceAttributes: {}, events: [], links: [],
    ...extra,
  }
}

// Generated: 12 traces, trace t in session s(t mod 4) by user u(t mod 4), 10 × (t + 1) tokens and
// $0.5 each, starting t minutes in; trace t's session arrives in a second span, in a later batch.
const trace = (t: number) => t.toString(16).padStart(32, '0')
const firstBatch = Array.from({ length: 12 }, (_, t) => span(trace(t), '0000000000000001', t0 + BigInt(t * 60) * second, { totalTokens: 10 * (t + 1), totalCostUsd: 0.5 }))
const secondBatch = Array.from({ length: 12 }, (_, t) =>
  span(trace(t), '0000000000000002', t0 + BigInt(t * 60 + 1) * second, { parentSpanId: '0000000000000001', sessionId: `s${t % 4}`, userId: `u${t % 4}` }))

const expected = [3, 2, 1, 0].map((s) => ({
  sessionId: `s${s}`, userId: `u${s}`,
  firstSeen: new Date(Number((t0 + BigInt(s * 60) * second) / 1_000_000n)).toISOString().replace('Z', '000Z'),
  lastSeen: new Date(Number((t0 + BigInt((s + 8) * 60 + 3) * second) / 1_000_000n)).toISOString().replace('Z', '000Z'),
  traceCount: 3, totalTokens: 10 * (s + 1) + 10 * (s + 5) + 10 * (s + 9), costUsd: 1.5,
}))

for (const engine of engines) {
  describe(`session summaries on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('lists the generated sessions exactly, whatever batch brought the session, redelivered or not', async () => {
      await storeAndSummarise(db, firstBatch)
      assert.deepEqual((await searchSessions(db, { projectId: 'p', limit: 10 })).sessions, [], 'no session named yet')
      await storeAndSummarise(db, secondBatch)
      await storeAndSummarise(db, secondBatch)
      await storeAndSummarise(db, [...firstBatch, ...secondBatch])
      const page = await searchSessions(db, { projectId: 'p', limit: 3 })
      assert.deepEqual(page.sessions, expected.slice(0, 3))
      const rest = await searchSessions(db, { projectId: 'p', limit: 3, cursor: page.next ?? undefined })
      assert.deepEqual([rest.sessions, rest.next], [expected.slice(3), null])
      // The span scan's answer (the filtered path) is the same.
      const filtered = await searchSessions(db, { projectId: 'p', limit: 10, from: new Date(0) })
      assert.deepEqual(filtered.sessions, expected)
    })

    it('the backfill equals the writer, and deleting a trace recomputes its session', async () => {
      const written = (await sql`select * from session_summaries order by session_id`.execute(db)).rows
      await sql`delete from session_summaries`.execute(db)
      await backfillSessionSummaries(db)
      assert.deepEqual((await sql`select * from session_summaries order by session_id`.execute(db)).rows, written)
      await deleteTrace(db, 'p', trace(3))
      const s3 = (await searchSessions(db, { projectId: 'p', limit: 10 })).sessions.find((s) => s.sessionId === 's3')
      assert.deepEqual([s3?.traceCount, s3?.totalTokens], [2, 80 + 120])
    })
  })
}
