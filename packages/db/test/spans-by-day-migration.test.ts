import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql, type Kysely } from 'kysely'
import { migrateToLatest, pendingMigrations, type Db } from '../src/index.ts'
import { copyStoredSpans, createPartitionsOfStoredDays, prepare } from '../src/migrations/2026-11-26T2330-spans-by-day.ts'
import { createTestDatabase, engines, migrateToBefore } from '../src/testing/index.ts'

// An installation with spans migrates to the day-partitioned table while the previous version's
// services keep writing and deleting: the copy is resumable, and the result holds exactly the
// spans the old table would hold, each in its day's partition.

const THIS_MIGRATION = '2026-11-26T2330-spans-by-day'
const dayMs = 86_400_000

const today = new Date(Math.floor(Date.now() / dayMs) * dayMs)
const daysAgo = (days: number, seconds = 0) => new Date(today.getTime() - days * dayMs + seconds * 1000)

/** A row as the previous version stored it. */
function row(projectId: string, i: number, start: Date) {
  return {
    project_id: projectId, trace_id: i.toString(16).padStart(32, '0'), span_id: (i + 1).toString(16).padStart(16, '0'), parent_span_id: null,
    name: `span ${i}`, kind: 1, start_time: start, end_time: start, duration_ns: 0, trace_state: null, status_code: 0, status_message: null,
    service_name: null, service_version: null, scope_name: null, scope_version: null, llm_vendor: null, llm_model: null, llm_request_type: null,
    input_tokens: null, output_tokens: null, total_tokens: null, attributes: '{}', resource_attributes: '{}', events: '[]', links: '[]',
  }
}

async function insertRows(db: Db, rows: Array<ReturnType<typeof row>>): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) await db.insertInto('spans').values(rows.slice(i, i + 1000)).execute()
}

async function storedKeys(db: Db): Promise<string[]> {
  const { rows } = await sql<{ key: string }>`select project_id || '/' || span_id || '/' || start_time::text as key from spans order by 1`.execute(db)
  return rows.map((r) => r.key).sort()
}

/** Spans of three projects over 5 days (and one from 1998): 2,400 rows. */
function seedRows() {
  const rows = []
  for (let i = 0; i < 2_400; i++) rows.push(row(['a', 'b', 'c'][i % 3] as string, i, daysAgo(i % 5, i)))
  rows[7] = row('b', 7, new Date('1998-07-09T16:00:00Z'))
  return rows
}

async function partitionOfEachRow(db: Db): Promise<Array<{ partition: string; day: string }>> {
  const { rows } = await sql<{ partition: string; day: string }>`
    select distinct tableoid::regclass::text as partition, to_char(start_time at time zone 'UTC', 'YYYYMMDD') as day from spans`.execute(db)
  return rows
}

for (const engine of engines) {
  describe(`the day partitions migration on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open({ migrated: false }))
      await migrateToBefore(db, THIS_MIGRATION)
    })
    after(() => drop())

    it('moves every stored span into the partition of its day, resuming a copy that stopped half way', async () => {
      const seeded = seedRows()
      await insertRows(db, seeded)
      const before = await storedKeys(db)
      // A first run that stopped after two batches of 500.
      const untyped = db as unknown as Kysely<unknown>
      await prepare(untyped)
      await createPartitionsOfStoredDays(untyped)
      await copyStoredSpans(untyped, { batchSize: 500, maxBatches: 2 })
      const { rows: [progress] } = await sql<{ copied: number }>`select count(*)::int as copied from spans_by_day`.execute(db)
      assert.equal(progress?.copied, 1_000)
      // Meanwhile the previous version stores a span and deletes one (through the old table).
      await insertRows(db, [row('a', 9_999, daysAgo(0, 5))])
      await sql`delete from spans where project_id = 'c' and span_id = ${(2 + 1).toString(16).padStart(16, '0')}`.execute(db)

      assert.equal((await migrateToLatest(db))[0], THIS_MIGRATION)
      assert.deepEqual(await pendingMigrations(db), [])

      const expected = [...before.filter((key) => !key.startsWith('c/0000000000000003/')), ...(await storedKeys(db)).filter((key) => key.startsWith('a/0000000000002710/'))]
      assert.deepEqual(await storedKeys(db), expected.sort())
      assert.equal((await storedKeys(db)).length, 2_400)
      for (const { partition, day } of await partitionOfEachRow(db)) assert.equal(partition, `spans_p${day}`)
      const { rows: [kind] } = await sql<{ kind: string; pkey: string | null }>`
        select relkind::text as kind, (select conname::text from pg_constraint where conrelid = 'spans'::regclass and contype = 'p') as pkey
        from pg_class where oid = 'spans'::regclass`.execute(db)
      assert.deepEqual(kind, { kind: 'p', pkey: 'spans_pkey' })
      // Nothing of the migration's scaffolding is left.
      const { rows: leftovers } = await sql<{ name: string }>`
        select relname::text as name from pg_class where relname in ('spans_by_day', 'spans_by_day_progress')
        union all select proname::text from pg_proc where proname like 'tracewell_spans_mirror%'`.execute(db)
      assert.deepEqual(leftovers, [])
    })
  })
}

describe('the day partitions migration with the previous version writing and deleting throughout', () => {
  let db: Db
  let drop: () => Promise<void>
  before(async () => {
    ;({ db, drop } = await createTestDatabase({ migrated: false, poolSize: 6 }))
    await migrateToBefore(db, THIS_MIGRATION)
  })
  after(() => drop())

  it('keeps every span written during it and none deleted during it', async () => {
    await insertRows(db, Array.from({ length: 20_000 }, (_, i) => row(`p${i % 4}`, i, daysAgo(i % 3, i % 86_000))))
    let migrating = true
    const written: number[] = []
    // The previous version's writer: its own statement, until the table it knows is gone.
    const writer = (async () => {
      for (let i = 100_000; migrating; i++) {
        await db.insertInto('spans').values(row('live', i, daysAgo(0, i % 1000))).execute()
        written.push(i)
      }
    })()
    // Its janitor: deletes project p3's spans as it goes, a few at a time, by ctid. Once the table
    // is partitioned that statement would reach every partition: it must be refused instead.
    let refused: unknown
    const janitor = (async () => {
      while (migrating && refused === undefined) {
        try {
          await sql`delete from spans where ctid = any(array(select ctid from spans where project_id = 'p3' order by start_time limit 50))`.execute(db)
        } catch (error) {
          refused = error
        }
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      await sql`delete from spans where ctid = any(array(select ctid from spans where project_id = 'p3' order by start_time limit 50))`.execute(db).catch((error: unknown) => {
        refused = error
      })
    })()
    try {
      assert.equal((await migrateToLatest(db))[0], THIS_MIGRATION)
    } finally {
      migrating = false
      await Promise.all([writer, janitor])
    }
    const { rows: counts } = await sql<{ project_id: string; spans: number }>`
      select project_id, count(*)::int as spans from spans group by 1 order by 1`.execute(db)
    const byProject = Object.fromEntries(counts.map((c) => [c.project_id, c.spans]))
    assert.equal(byProject.live, written.length)
    assert.ok(written.length > 0, 'the writer wrote during the migration')
    assert.deepEqual([byProject.p0, byProject.p1, byProject.p2], [5_000, 5_000, 5_000])
    // What the old janitor deleted stayed deleted, and after the swap its statement was refused.
    assert.ok((byProject.p3 ?? 0) < 5_000)
    assert.match(String(refused), /partitioned by day/)
    for (const { partition, day } of await partitionOfEachRow(db)) assert.equal(partition, `spans_p${day}`)
  })
})
