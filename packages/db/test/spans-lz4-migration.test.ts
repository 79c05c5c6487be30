import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import { ensureDayPartitions, migrateToLatest, type Db } from '../src/index.ts'
import { engines, migrateToBefore } from '../src/testing/index.ts'

// A span's JSON columns are compressed with lz4 on a server that has it (Debian's Postgres here),
// in every partition of spans, those made before the migration and those made after; PGlite has
// only pglz and keeps it. What was stored before reads back as it was. Writers go on while it
// runs: waiting behind a long query, it lets their inserts pass every LOCK_WAIT (2 s).

const MIGRATION = '2026-12-07T1700-spans-lz4'
const JSON_COLUMNS = ['attributes', 'events', 'links', 'resource_attributes']

/** Attributes of about 6 KB, as an LLM span with a long system prompt has: over the 2 KB at which Postgres compresses. */
const longPrompt = (order: number) => ({
  'llm.request.messages': JSON.stringify([
    { role: 'system', content: 'You are a support assistant for Acme. Answer briefly, cite the order number, never promise refunds. '.repeat(60) },
    { role: 'user', content: `Where is order #${order}?` },
  ]),
})

async function storeSpan(db: Db, traceId: string, day: string): Promise<void> {
  await sql`
    insert into spans (project_id, trace_id, span_id, name, kind, start_time, end_time, duration_ns, attributes, resource_attributes, events, links)
    values ('p', ${traceId.padStart(32, '0')}, '00000000000000a1', 'openai.chat', 3, ${`${day}T12:00:00Z`}::timestamptz, ${`${day}T12:00:01Z`}::timestamptz,
      1000000000, ${JSON.stringify(longPrompt(Number.parseInt(traceId, 16)))}::jsonb, '{}', '[]', '[]')`.execute(db)
}

/** How each partition of spans compresses the four JSON columns ('' for the server's default, pglz). */
async function compressionByPartition(db: Db): Promise<Record<string, string[]>> {
  const { rows } = await sql<{ name: string; methods: string[] }>`
    select c.relname as name, array_agg(a.attcompression::text order by a.attname) as methods
    from pg_partition_tree('spans') t join pg_class c on c.oid = t.relid join pg_attribute a on a.attrelid = c.oid
    where a.attname = any(${JSON_COLUMNS})
    group by c.relname order by c.relname`.execute(db)
  return Object.fromEntries(rows.map((row) => [row.name, row.methods.map((method) => (method === '\u0000' ? '' : method))]))
}

async function storedCompression(db: Db, traceId: string): Promise<{ method: string | null; order: string }> {
  const { rows: [row] } = await sql<{ method: string | null; order: string }>`
    select pg_column_compression(attributes) as method, attributes->>'llm.request.messages' as order
    from spans where trace_id = ${traceId.padStart(32, '0')}`.execute(db)
  assert.ok(row, `span of trace ${traceId}`)
  return { method: row.method, order: JSON.parse(row.order).at(-1).content }
}

for (const engine of engines) {
  const lz4 = engine.name === 'postgres'
  describe(`spans' JSON compressed with lz4 on ${engine.name}`, { timeout: 120_000 }, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open({ migrated: false })))
    after(() => drop())

    it(lz4 ? 'compresses new rows with lz4 in the partitions made before and after it, and reads the old ones' : 'leaves pglz, the only method PGlite has', async () => {
      await migrateToBefore(db, MIGRATION)
      await ensureDayPartitions(db, new Date('2032-03-01T12:00:00Z'))
      await storeSpan(db, 'a1', '2032-03-01')
      assert.equal((await storedCompression(db, 'a1')).method, 'pglz')

      await migrateToLatest(db)
      const expected = lz4 ? 'l' : ''
      const before = await compressionByPartition(db)
      assert.ok(Object.keys(before).includes('spans_p20320301'))
      for (const [partition, methods] of Object.entries(before)) assert.deepEqual(methods, JSON_COLUMNS.map(() => expected), partition)

      await storeSpan(db, 'a2', '2032-03-01')
      // A day partition made after the migration, as the writer and the janitor make them ahead.
      await ensureDayPartitions(db, new Date('2032-03-09T12:00:00Z'))
      assert.deepEqual((await compressionByPartition(db)).spans_p20320309, JSON_COLUMNS.map(() => expected))
      await storeSpan(db, 'a3', '2032-03-09')

      assert.deepEqual(await storedCompression(db, 'a1'), { method: 'pglz', order: 'Where is order #161?' })
      assert.deepEqual(await storedCompression(db, 'a2'), { method: lz4 ? 'lz4' : 'pglz', order: 'Where is order #162?' })
      assert.deepEqual(await storedCompression(db, 'a3'), { method: lz4 ? 'lz4' : 'pglz', order: 'Where is order #163?' })
    })

    if (lz4) {
      it('lets inserts pass while it waits behind a long query, and ends once the query does', async () => {
        const { db: waiting, drop: dropWaiting } = await engine.open({ migrated: false })
        try {
          await migrateToBefore(waiting, MIGRATION)
          await ensureDayPartitions(waiting, new Date('2032-03-01T12:00:00Z'))
          let released = false
          // A reader of the day's partition for 4 s, as a search over the month holds it.
          const reader = waiting.transaction().execute(async (trx) => {
            await sql`select count(*) from spans_p20320301`.execute(trx)
            await sleep(4_000)
            released = true
          })
          await sleep(200)
          const migrated = migrateToLatest(waiting)
          await sleep(500)
          // A writer's insert into that partition, queued behind the migration's waiting ALTER.
          await storeSpan(waiting, 'b1', '2032-03-01')
          assert.equal(released, false, 'the insert waited for the reader instead of at most the ALTER\'s lock wait')
          await reader
          await migrated
          assert.ok(Object.values(await compressionByPartition(waiting)).every((methods) => methods.every((method) => method === 'l')))
          await storeSpan(waiting, 'b2', '2032-03-01')
          assert.equal((await storedCompression(waiting, 'b2')).method, 'lz4')
        } finally {
          await dropWaiting()
        }
      })
    }
  })
}
