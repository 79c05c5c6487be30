import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Migrator, sql, type Migration } from 'kysely'
import { TextFilterWords } from '@tracewell/text-filter'
import { backfillTextBlocks, migrateToLatest, searchTraces, type Db } from '../src/index.ts'
import { migrations } from '../src/migrations/index.ts'
import { engines, migrateToBefore } from '../src/testing/index.ts'

// An installation with traces migrates to full-text search by blocks: the blocks of the traces
// stored before are made from their spans, so search finds them as before; a summariser of the
// previous version can no longer write a summary (it would leave its traces out of the blocks);
// and back.

const THIS_MIGRATION = '2026-11-27T0600-text-blocks'
const dayMs = 86_400_000
const today = Math.floor(Date.now() / dayMs) * dayMs

/**
 * A trace of one span whose prompt is `text`, starting `offsetMs` after today's midnight, with its
 * summary as the previous version wrote it on the day it started.
 */
async function seedTrace(db: Db, traceId: string, offsetMs: number, text: string): Promise<void> {
  const start = new Date(today + offsetMs)
  const end = new Date(start.getTime() + 1_000)
  const attributes = JSON.stringify({ 'gen_ai.prompt.0.content': { stringValue: text } })
  const words = new TextFilterWords()
  words.addJson(Buffer.from(attributes))
  await sql`
    insert into spans (project_id, trace_id, span_id, name, kind, start_time, end_time, duration_ns, status_code, attributes, resource_attributes, events, links)
    values ('p', ${traceId}, '0000000000000001', 'chat', 1, ${start}, ${end}, 1000000000, 0,
      ${attributes}::jsonb, '{}'::jsonb, '[]'::jsonb, '[]'::jsonb)`.execute(db)
  await sql`
    insert into trace_summaries (project_id, trace_id, name, has_root, start_time, end_time, duration_us, span_count, error_count, text_filter, fold_day)
    values ('p', ${traceId}, 'chat', true, ${start}, ${end}, 1000000, 1, 0, ${`x${words.toHex()}`}::varbit, least(${start}::date, current_date))`.execute(db)
}

const blocks = async (db: Db) =>
  (await sql<{ block: Date; partition: string }>`select block, tableoid::regclass::text as partition from trace_text_blocks order by block`.execute(db)).rows
    .map((row) => [row.block.toISOString(), row.partition])

for (const engine of engines) {
  describe(`text-blocks migration on ${engine.name}`, { timeout: 120_000 }, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open({ migrated: false })))
    after(() => drop())

    it('makes the blocks of the traces stored before from their spans, fences out the previous summariser, and goes back', async () => {
      await migrateToBefore(db, THIS_MIGRATION)
      await seedTrace(db, 'a'.repeat(32), -3 * dayMs + 60_000, 'yesterday we talked about capybaras')
      await seedTrace(db, 'b'.repeat(32), 605_000, 'capybaras and otters')
      await seedTrace(db, 'c'.repeat(32), 1_000, 'only otters here')

      await migrateToLatest(db)
      const day = (offset: number) => new Date(today + offset * dayMs).toISOString().slice(0, 10).replaceAll('-', '')
      assert.deepEqual(await blocks(db), [
        [new Date(today - 3 * dayMs).toISOString(), `trace_text_blocks_p${day(-3)}`],
        [new Date(today).toISOString(), `trace_text_blocks_p${day(0)}`],
        [new Date(today + 600_000).toISOString(), `trace_text_blocks_p${day(0)}`],
      ])
      const found = async (text: string) =>
        (await searchTraces(db, { projectId: 'p', limit: 10, sort: 'time', order: 'desc', text })).traces.map((trace) => trace.traceId[0]).join('')
      assert.equal(await found('capybaras'), 'ba')
      assert.equal(await found('otters'), 'bc')
      assert.equal(await found('walrus'), '')

      // Its last step makes again the blocks of the traces summarised since it began (today).
      await sql`truncate trace_text_blocks`.execute(db)
      await backfillTextBlocks(db, { foldedSince: new Date(today).toISOString().slice(0, 10) })
      assert.deepEqual((await blocks(db)).map(([block]) => block), [new Date(today).toISOString(), new Date(today + 600_000).toISOString()])
      assert.equal(await found('capybaras'), 'b', 'the trace summarised three days ago is not read again')

      // What a summariser of the previous version writes: a summary without words_in_blocks.
      await assert.rejects(
        sql`insert into trace_summaries (project_id, trace_id, name, has_root, start_time, end_time, duration_us, span_count, error_count)
          values ('p', ${'d'.repeat(32)}, 'chat', true, now(), now(), 0, 1, 0)`.execute(db),
        (error: { code?: string; message: string }) => error.code === '23502' && /words_in_blocks/.test(error.message),
      )

      const everyVersion = new Migrator({ db, provider: { getMigrations: async () => migrations as Record<string, Migration> } })
      const { error } = await everyVersion.migrateTo(Object.keys(migrations).filter((name) => name < THIS_MIGRATION).at(-1)!)
      assert.equal(error, undefined)
      const { rows } = await sql<{ blocks: string | null }>`select to_regclass('trace_text_blocks')::text as blocks`.execute(db)
      assert.equal(rows[0]!.blocks, null)
      await sql`insert into trace_summaries (project_id, trace_id, name, has_root, start_time, end_time, duration_us, span_count, error_count)
        values ('p', ${'d'.repeat(32)}, 'chat', true, now(), now(), 0, 1, 0)`.execute(db)
    })
  })
}
