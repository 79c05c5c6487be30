import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { DEFAULT_SPAN_PARTITION, ensureSpanPartitions, listSpanPartitions, projectsInSpanPartition, spanPartitionName, type Db } from '../src/index.ts'
import { engines } from '../src/testing/index.ts'

// The day partitions of spans are made ahead of need: yesterday to three days ahead, each once,
// taking along what the default partition held of its day.

const dayMs = 86_400_000

for (const engine of engines) {
  describe(`span partitions on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('makes the days from yesterday to three days ahead once, moving in what the default partition held of them', async () => {
      const now = new Date('2032-02-28T18:00:00Z')
      const early = (day: string) => sql`
        insert into spans (project_id, trace_id, span_id, name, kind, start_time, end_time, duration_ns, attributes, resource_attributes, events, links)
        values ('early', ${day.replaceAll('-', '').padStart(32, '0')}, '00000000000000a1', 'clock ahead', 1, ${`${day}T12:00:00Z`}::timestamptz, ${`${day}T12:00:00Z`}::timestamptz, 0, '{}', '{}', '[]', '[]')`
      // Spans from clients whose clocks ran days ahead, stored before their days had partitions.
      await early('2032-03-02').execute(db)
      await early('2032-03-05').execute(db)
      const made = await ensureSpanPartitions(db, now)
      assert.deepEqual(made, ['spans_p20320227', 'spans_p20320228', 'spans_p20320229', 'spans_p20320301', 'spans_p20320302'])
      assert.deepEqual(await ensureSpanPartitions(db, now), [])
      assert.deepEqual(await ensureSpanPartitions(db, new Date(now.getTime() + dayMs)), ['spans_p20320303'])
      const { rows } = await sql<{ partition: string; day: string }>`
        select tableoid::regclass::text as partition, to_char(start_time at time zone 'UTC', 'YYYY-MM-DD') as day from spans where project_id = 'early' order by 2`.execute(db)
      assert.deepEqual(rows, [{ partition: 'spans_p20320302', day: '2032-03-02' }, { partition: DEFAULT_SPAN_PARTITION, day: '2032-03-05' }])
      assert.deepEqual(await projectsInSpanPartition(db, 'spans_p20320302'), ['early'])
      const names = (await listSpanPartitions(db)).map((partition) => partition.name)
      assert.equal(names[0], DEFAULT_SPAN_PARTITION)
      assert.equal(spanPartitionName(new Date('2032-02-29T23:59:59.999Z')), 'spans_p20320229')
      assert.ok(names.includes('spans_p20320303'))
    })
  })
}
