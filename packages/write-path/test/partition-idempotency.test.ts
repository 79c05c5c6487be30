import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createDayPartition, defaultPartitionName, partitionName, sql, type Db, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeSpans, summariseAll } from '../src/index.ts'
import { storeByStatement } from './support/store-and-summarise.ts'

// spans is partitioned by day of start_time, with (project, trace, span, start time) as its key:
// a resent span (the same bytes, so the same start time) is refused in whichever partition it
// lands, by the COPY path (a unique violation, then the statement path) and by the statement path
// alone (PGlite, redelivered jobs). Here across a midnight, where a trace's spans straddle two
// partitions, and through the default partition and the move out of it.

const midnight = new Date('2031-03-01T00:00:00Z')
const nanosAt = (instant: Date, extraMicros = 0) => (BigInt(instant.getTime()) * 1_000_000n + BigInt(extraMicros) * 1000n).toString()

function span(spanId: string, startNanos: string, overrides: Partial<SpanInsert> = {}): SpanInsert {
  return {
    projectId: 'boundary', traceId: 'a1'.repeat(16), spanId: spanId.padStart(16, '0'), parentSpanId: null, name: `span ${spanId}`, kind: 1,
    startTimeUnixNano: startNanos, endTimeUnixNano: startNanos, durationNs: '0', traceState: null, statusCode: 0, statusMessage: null,
    serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null, llmVendor: null, llmModel: null, llmRequestType: null,
    inputTokens: null, outputTokens: null, totalTokens: null, attributes: {}, resourceAttributes: {}, events: [], links: [], ...overrides,
  }
}

/** The last microsecond of the day before midnight, and the first of the day after. */
const lastOfDay = (id: string, overrides: Partial<SpanInsert> = {}) => span(id, nanosAt(midnight, -1), overrides)
const firstOfDay = (id: string, overrides: Partial<SpanInsert> = {}) => span(id, nanosAt(midnight), overrides)

async function partitionsOf(db: Db, projectId: string): Promise<Record<string, number>> {
  const { rows } = await sql<{ partition: string; spans: number }>`
    select tableoid::regclass::text as partition, count(*)::int as spans from spans where project_id = ${projectId} group by 1 order by 1`.execute(db)
  return Object.fromEntries(rows.map((row) => [row.partition, row.spans]))
}

for (const engine of engines) {
  describe(`storing spans idempotently across day partitions on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open())
      for (const day of [new Date(midnight.getTime() - 86_400_000), midnight]) await db.transaction().execute((trx) => createDayPartition(trx, 'spans', day))
    })
    after(() => drop())

    it('stores a trace that straddles midnight once, however often it is resent, by either path', async () => {
      const trace = [lastOfDay('1'), firstOfDay('2', { parentSpanId: '1'.padStart(16, '0') }), lastOfDay('3'), firstOfDay('4')]
      assert.equal((await storeSpans(db, trace)).inserted, 4)
      // Resent whole: the COPY meets the key and the batch goes by statement, storing nothing.
      assert.deepEqual(await storeSpans(db, [{ projectId: 'boundary', spans: () => trace }]), { inserted: 0, duplicates: 4 })
      assert.equal(await storeByStatement(db, trace), 0)
      // Resent with new spans on both sides of midnight: only those are stored.
      const more = [...trace, lastOfDay('5'), firstOfDay('6')]
      assert.deepEqual(await storeSpans(db, [{ projectId: 'boundary', spans: () => more }]), { inserted: 2, duplicates: 4 })
      assert.deepEqual(await partitionsOf(db, 'boundary'), {
        [partitionName('spans', new Date(midnight.getTime() - 1))]: 3,
        [partitionName('spans', midnight)]: 3,
      })
      // The summary counts each span once.
      await summariseAll(db)
      const { rows } = await sql<{ span_count: number }>`select span_count from trace_summaries where project_id = 'boundary'`.execute(db)
      assert.deepEqual(rows, [{ span_count: 6 }])
    })

    it('stores a span of a day without a partition once, before and after that day gets its partition', async () => {
      const later = new Date('2031-06-15T10:00:00Z')
      const lone = span('9', nanosAt(later), { projectId: 'far', traceId: 'b2'.repeat(16) })
      assert.equal((await storeSpans(db, [lone])).inserted, 1)
      assert.deepEqual(await partitionsOf(db, 'far'), { [defaultPartitionName('spans')]: 1 })
      assert.equal((await storeSpans(db, [lone])).inserted, 0)
      // Its day's partition is made: the span moves there, and a resend is still refused.
      assert.equal(await db.transaction().execute((trx) => createDayPartition(trx, 'spans', later)), true)
      assert.deepEqual(await partitionsOf(db, 'far'), { [partitionName('spans', later)]: 1 })
      assert.equal((await storeSpans(db, [lone])).inserted, 0)
      assert.equal(await storeByStatement(db, [lone]), 0)
      assert.deepEqual(await partitionsOf(db, 'far'), { [partitionName('spans', later)]: 1 })
    })
  })
}
