import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql, type Db } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { SealedSummaryDays } from '../src/sealed-summary-days.ts'
import { storeSpans, summariseAll } from '../src/index.ts'
import { chatSpan } from './support/chat-span.ts'

// The first fold of a day seals the day before: a trace summarised then is found through that
// day's filter, and a trace it never held is looked up in today's partition alone.

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

for (const engine of engines) {
  describe(`sealed summary days on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it("looks a trace up in yesterday's partition only when its filter may hold it", { timeout: 60_000 }, async () => {
      const spans = Array.from({ length: 40 }, (_, i) =>
        chatSpan({ projectId: 'sealed', i: 0x5ea1_0000 + i, startMs: Date.now(), durationMs: 10, failed: false, inputTokens: 7, costUsd: 0.1, sessionId: 's', userId: 'u' }))
      const traceIds = spans.map((span) => span.traceId)
      await storeSpans(db, spans)
      await summariseAll(db)
      const { rows: [clock] } = await sql<{ today: string }>`select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD') as today`.execute(db)
      const today = clock!.today
      const tomorrow = isoDay(Date.parse(`${today}T00:00:00Z`) + 86_400_000)

      // A summariser whose fold reads tomorrow on the clock: today is yesterday, sealed.
      const days = new SealedSummaryDays()
      await days.refresh(db, tomorrow)
      for (const traceId of traceIds) assert.deepEqual(days.traceDays('sealed', traceId), [tomorrow, today], traceId)
      const unseen = Array.from({ length: 200 }, (_, i) => days.traceDays('sealed', (0x0dd_0000 + i).toString(16).padStart(32, '0')))
      // Ten bits a key: about 1% of unseen keys pass the filter.
      assert.ok(unseen.filter((looked) => looked.length > 1).length <= 10, 'unseen traces probed in yesterday')
      assert.ok(unseen.every((looked) => looked[0] === tomorrow))
    })

    it('never folds into a day before one a fold wrote into, as after a clock stepped back across a midnight', { timeout: 60_000 }, async () => {
      const span = (i: number) => chatSpan({ projectId: 'stepped', i: 0x57e9_0000 + i, startMs: Date.now(), durationMs: 10, failed: false, inputTokens: 7, costUsd: 0.1, sessionId: 's', userId: 'u' })
      await storeSpans(db, [span(1)])
      await summariseAll(db)
      const { rows: [clock] } = await sql<{ tomorrow: string }>`select to_char(clock_timestamp() at time zone 'UTC' + interval '1 day', 'YYYY-MM-DD') as tomorrow`.execute(db)
      const tomorrow = clock!.tomorrow
      // As if a fold had run tomorrow, then the clock went back a day.
      await sql`update trace_summaries set fold_day = ${tomorrow}::date where project_id = 'stepped'`.execute(db)
      await storeSpans(db, [span(2)])
      await summariseAll(db)
      const { rows } = await sql<{ fold_day: string }>`select distinct fold_day::text as fold_day from trace_summaries where project_id = 'stepped'`.execute(db)
      assert.deepEqual(rows, [{ fold_day: tomorrow }])
    })
  })
}
