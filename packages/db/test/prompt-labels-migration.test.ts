import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Migrator } from 'kysely'
import { migrations } from '../src/migrations/index.ts'
import { createProject, createPromptset, createTeam, listLabelMoves, listPromptLabels, listPrompts, migrateToLatest, moveLabel, sql, type Db } from '../src/index.ts'
import { engines } from '../src/testing/index.ts'

// The prompt-labels migration on a database with prompts made by the previous release, and the
// two releases side by side during a rolling deploy: each must see the other's changes.

const initialSchema = '2026-11-22T0300-initial-schema'

/** What the previous release runs to make a version live (its setLiveVersion), verbatim. */
async function previousReleaseSetsLive(db: Db, promptsetId: string, version: number | null): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select id from promptsets where id = ${promptsetId} for update`.execute(trx)
    await sql`update prompts set live = false, updated_at = now() where promptset_id = ${promptsetId} and live = true`.execute(trx)
    if (version !== null) await sql`update prompts set live = true, updated_at = now() where promptset_id = ${promptsetId} and version = ${version}`.execute(trx)
  })
}

/** What the previous release inserts for a new version (its createPromptVersion). */
async function previousReleaseCreates(db: Db, promptsetId: string, version: number, live: boolean): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select id from promptsets where id = ${promptsetId} for update`.execute(trx)
    if (live) await sql`update prompts set live = false, updated_at = now() where promptset_id = ${promptsetId} and live = true`.execute(trx)
    await sql`insert into prompts (promptset_id, value, model, version, live) values (${promptsetId}, ${`v${version}`}, 'm', ${version}, ${live})`.execute(trx)
  })
}

async function liveColumn(db: Db, promptsetId: string): Promise<number[]> {
  const rows = await db.selectFrom('prompts').select('version').where('promptset_id', '=', promptsetId).where('live', '=', true).execute()
  return rows.map((row) => row.version)
}

const moveSummary = (moves: { label: string; fromVersion: number | null; toVersion: number | null; movedByKeyId: string | null }[]) =>
  moves.map((move) => [move.label, move.fromVersion, move.toVersion, move.movedByKeyId])

for (const engine of engines) {
  describe(`prompt-labels migration on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('goes down to the live flag and up again, copying every live version into production', async () => {
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
      const down = await migrator.migrateTo(initialSchema)
      assert.equal(down.error, undefined)
      const { rows: tables } = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_name like 'prompt_label%'`.execute(db)
      assert.deepEqual(tables, [])

      const team = await createTeam(db, { name: 't' })
      const project = await createProject(db, { teamId: team.id, name: 'p' })
      const withLive = await createPromptset(db, { projectId: project.id, name: 'live' })
      const withoutLive = await createPromptset(db, { projectId: project.id, name: 'none' })
      await previousReleaseCreates(db, withLive.id, 1, true)
      await previousReleaseCreates(db, withLive.id, 2, true)
      await previousReleaseCreates(db, withLive.id, 3, false)
      await previousReleaseCreates(db, withoutLive.id, 1, false)

      assert.deepEqual((await migrateToLatest(db))[0], '2026-11-24T0900-prompt-labels', 'the labels migration applies first; later ones follow')
      assert.deepEqual((await listPromptLabels(db, withLive.id)).map((label) => [label.name, label.version]), [['production', 2]])
      assert.deepEqual(await listPromptLabels(db, withoutLive.id), [])
      assert.deepEqual((await listPrompts(db, withLive.id)).map((prompt) => [prompt.version, prompt.live, prompt.labels]), [
        [1, false, []],
        [2, true, ['production']],
        [3, false, []],
      ])
      // The copy is not a move: the history starts with the first move after the migration.
      assert.deepEqual((await listLabelMoves(db, { promptsetId: withLive.id, limit: 10 })).moves, [])
    })

    it('shows a change of the live flag by the previous release as a move of production', async () => {
      const team = await createTeam(db, { name: 'old writes' })
      const project = await createProject(db, { teamId: team.id, name: 'p' })
      const promptset = await createPromptset(db, { projectId: project.id, name: 'r' })
      await previousReleaseCreates(db, promptset.id, 1, true)
      await previousReleaseCreates(db, promptset.id, 2, false)
      await previousReleaseCreates(db, promptset.id, 3, true)
      assert.deepEqual((await listPromptLabels(db, promptset.id)).map((label) => [label.name, label.version]), [['production', 3]])

      await previousReleaseSetsLive(db, promptset.id, 2)
      assert.deepEqual((await listPromptLabels(db, promptset.id)).map((label) => [label.name, label.version]), [['production', 2]])
      await previousReleaseSetsLive(db, promptset.id, null)
      assert.deepEqual(await listPromptLabels(db, promptset.id), [])

      // Newest first; clearing one flag and setting another reads as a removal, then a move.
      const { moves } = await listLabelMoves(db, { promptsetId: promptset.id, limit: 20 })
      assert.deepEqual(moveSummary(moves), [
        ['production', 2, null, null],
        ['production', null, 2, null],
        ['production', 3, null, null],
        ['production', null, 3, null],
        ['production', 1, null, null],
        ['production', null, 1, null],
      ])
      assert.ok(moves.every((move) => move.movedByKeyPrefix === null))
    })

    it('mirrors moves of production into the live flag for the previous release, and only production', async () => {
      const team = await createTeam(db, { name: 'new writes' })
      const project = await createProject(db, { teamId: team.id, name: 'p' })
      const promptset = await createPromptset(db, { projectId: project.id, name: 'r' })
      for (const version of [1, 2, 3]) await previousReleaseCreates(db, promptset.id, version, false)

      const move = (label: string, version: number | null) => moveLabel(db, { promptsetId: promptset.id, label, version, movedBy: null })
      await move('staging', 1)
      assert.deepEqual(await liveColumn(db, promptset.id), [])
      await move('production', 1)
      assert.deepEqual(await liveColumn(db, promptset.id), [1])
      await move('production', 3)
      assert.deepEqual(await liveColumn(db, promptset.id), [3])
      await move('staging', 3)
      await move('staging', null)
      assert.deepEqual(await liveColumn(db, promptset.id), [3])
      await move('production', null)
      assert.deepEqual(await liveColumn(db, promptset.id), [])

      // The previous release then makes 2 live, and label-aware code moves it on: one live row, and
      // one history row per move (the mirror writes none of its own).
      await previousReleaseSetsLive(db, promptset.id, 2)
      await move('production', 1)
      assert.deepEqual(await liveColumn(db, promptset.id), [1])
      assert.deepEqual(moveSummary((await listLabelMoves(db, { promptsetId: promptset.id, label: 'production', limit: 20 })).moves), [
        ['production', 2, 1, null],
        ['production', null, 2, null],
        ['production', 3, null, null],
        ['production', 1, 3, null],
        ['production', null, 1, null],
      ])
    })
  })
}
