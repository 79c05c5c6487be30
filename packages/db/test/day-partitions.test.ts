import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { DAY_PARTITIONED_TABLES, defaultPartitionName, ensureDayPartitions, listDayPartitions, projectsInPartition, partitionName, type Db } from '../src/index.ts'
import { engines } from '../src/testing/index.ts'

// The day partitions of spans and of the summaries are made ahead of need: yesterday to three days ahead, each once,
// taking along what the default partition held of its day.

const dayMs = 86_400_000

for (const engine of engines) {
  describe(`day partitions on ${engine.name}`, () => {
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
      const made = await ensureDayPartitions(db, now)
      const days = ['20320227', '20320228', '20320229', '20320301', '20320302']
      assert.deepEqual(made, DAY_PARTITIONED_TABLES.flatMap((table) => days.map((day) => `${table}_p${day}`)))
      assert.deepEqual(await ensureDayPartitions(db, now), [])
      assert.deepEqual(await ensureDayPartitions(db, new Date(now.getTime() + dayMs)), DAY_PARTITIONED_TABLES.map((table) => `${table}_p20320303`))
      const { rows } = await sql<{ partition: string; day: string }>`
        select tableoid::regclass::text as partition, to_char(start_time at time zone 'UTC', 'YYYY-MM-DD') as day from spans where project_id = 'early' order by 2`.execute(db)
      assert.deepEqual(rows, [{ partition: 'spans_p20320302', day: '2032-03-02' }, { partition: defaultPartitionName('spans'), day: '2032-03-05' }])
      assert.deepEqual(await projectsInPartition(db, 'spans_p20320302'), ['early'])
      const names = (await listDayPartitions(db, 'spans')).map((partition) => partition.name)
      assert.equal(names[0], defaultPartitionName('spans'))
      assert.equal(partitionName('spans', new Date('2032-02-29T23:59:59.999Z')), 'spans_p20320229')
      assert.ok(names.includes('spans_p20320303'))
    })
  })
}
