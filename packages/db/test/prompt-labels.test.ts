import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ControlledTransaction } from 'kysely'
import {
  createProject, createPromptVersion, createPromptset, createTeam, findLabelledPrompt, findLivePrompt, insertApiKey, listLabelMoves,
  listPromptLabels, listPrompts, moveLabel, setLiveVersion, sql, type Database, type Db, type LabelMoveDto, type LabelMoveResult,
} from '../src/index.ts'
import { createTestDatabase, type TestDatabase } from '../src/testing/index.ts'
import { engines } from '../src/testing/index.ts'

interface PromptsetWithPrompts {
  id: string
  keyId: string
}

/** A promptset with `versions` versions and a project key to move its labels with. */
async function promptsetWithVersions(db: Db, name: string, versions: number): Promise<PromptsetWithPrompts> {
  const team = await createTeam(db, { name })
  const project = await createProject(db, { teamId: team.id, name })
  const key = await insertApiKey(db, { kind: 'project', teamId: team.id, projectId: project.id, keyHash: `hash-${name}`, prefix: `tw_proj_${name.slice(0, 4)}` })
  const promptset = await createPromptset(db, { projectId: project.id, name })
  for (let index = 0; index < versions; index++) {
    await createPromptVersion(db, { promptsetId: promptset.id, value: `v${index + 1}`, variables: [], model: 'm', modelSettings: {}, tags: [], note: '', spanId: null, live: false })
  }
  return { id: promptset.id, keyId: key.id }
}

const labelRows = (db: Db, promptsetId: string) =>
  db.selectFrom('prompt_labels').select(['name', 'version']).where('promptset_id', '=', promptsetId).orderBy('name').execute()

const history = async (db: Db, promptsetId: string, label?: string) => (await listLabelMoves(db, { promptsetId, label, limit: 100 })).moves

/** Each move starts where the one before it ended: nothing was lost or applied out of order. */
function assertChained(moves: readonly LabelMoveDto[], start: number | null): void {
  let at = start
  for (const move of [...moves].reverse()) {
    assert.equal(move.fromVersion, at, `move ${move.id} starts at ${move.fromVersion}, the label was at ${at}`)
    at = move.toVersion
  }
}

for (const engine of engines) {
  describe(`prompt labels on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('moves, keeps and removes labels, recording each move with the key that made it', async () => {
      const promptset = await promptsetWithVersions(db, 'moves', 3)
      const movedBy = { keyId: promptset.keyId }
      const moved = await moveLabel(db, { promptsetId: promptset.id, label: 'staging', version: 2, movedBy })
      assert.equal(moved.kind, 'moved')
      assert.deepEqual(moved.kind === 'moved' && [moved.label?.name, moved.label?.version, moved.previousVersion], ['staging', 2, null])

      const again = await moveLabel(db, { promptsetId: promptset.id, label: 'staging', version: 2, movedBy })
      assert.deepEqual(again.kind === 'unchanged' && [again.label?.name, again.label?.version], ['staging', 2])
      assert.deepEqual(await moveLabel(db, { promptsetId: promptset.id, label: 'staging', version: 9, movedBy }), { kind: 'version-not-found' })
      assert.deepEqual(await moveLabel(db, { promptsetId: promptset.id, label: 'staging', version: 3, expectedVersion: 1, movedBy }), { kind: 'conflict', currentVersion: 2 })
      assert.deepEqual(await moveLabel(db, { promptsetId: promptset.id, label: 'canary', version: 3, expectedVersion: 2, movedBy }), { kind: 'conflict', currentVersion: null })

      await moveLabel(db, { promptsetId: promptset.id, label: 'staging', version: 3, expectedVersion: 2, movedBy })
      await moveLabel(db, { promptsetId: promptset.id, label: 'canary', version: 3, expectedVersion: null, movedBy: null })
      await setLiveVersion(db, promptset.id, 1, movedBy)
      assert.deepEqual(await labelRows(db, promptset.id), [{ name: 'canary', version: 3 }, { name: 'production', version: 1 }, { name: 'staging', version: 3 }])
      assert.deepEqual((await listPromptLabels(db, promptset.id)).map((label) => label.name), ['canary', 'production', 'staging'])
      assert.deepEqual((await listPrompts(db, promptset.id)).map((prompt) => [prompt.version, prompt.live, prompt.labels]), [
        [1, true, ['production']],
        [2, false, []],
        [3, false, ['canary', 'staging']],
      ])
      assert.equal((await findLabelledPrompt(db, promptset.id, 'staging'))?.value, 'v3')
      assert.equal((await findLivePrompt(db, promptset.id))?.value, 'v1')
      assert.equal(await findLabelledPrompt(db, promptset.id, 'unknown'), undefined)

      const removed = await moveLabel(db, { promptsetId: promptset.id, label: 'canary', version: null, movedBy })
      assert.deepEqual(removed, { kind: 'moved', label: null, previousVersion: 3 })
      assert.deepEqual(await moveLabel(db, { promptsetId: promptset.id, label: 'canary', version: null, movedBy }), { kind: 'unchanged', label: null })

      const moves = await history(db, promptset.id)
      assert.deepEqual(moves.map((move) => [move.label, move.fromVersion, move.toVersion, move.movedByKeyId, move.movedByKeyPrefix]), [
        ['canary', 3, null, promptset.keyId, 'tw_proj_move'],
        ['production', null, 1, promptset.keyId, 'tw_proj_move'],
        ['canary', null, 3, null, null],
        ['staging', 2, 3, promptset.keyId, 'tw_proj_move'],
        ['staging', null, 2, promptset.keyId, 'tw_proj_move'],
      ])
      assert.ok(moves.every((move, index) => index === 0 || move.movedAt <= (moves[index - 1] as LabelMoveDto).movedAt))
      assert.deepEqual((await history(db, promptset.id, 'staging')).map((move) => move.toVersion), [3, 2])
    })

    it('pages the history newest first', async () => {
      const promptset = await promptsetWithVersions(db, 'paged', 2)
      for (let index = 0; index < 5; index++) await moveLabel(db, { promptsetId: promptset.id, label: 'flip', version: (index % 2) + 1, movedBy: null })
      const first = await listLabelMoves(db, { promptsetId: promptset.id, limit: 2 })
      const second = await listLabelMoves(db, { promptsetId: promptset.id, limit: 2, before: first.next ?? undefined })
      const third = await listLabelMoves(db, { promptsetId: promptset.id, limit: 2, before: second.next ?? undefined })
      assert.deepEqual([first, second, third].map((page) => page.moves.map((move) => move.toVersion)), [[1, 2], [1, 2], [1]])
      assert.equal(third.next, null)
      assertChained([...first.moves, ...second.moves, ...third.moves], null)
    })

    it('creates a version and moves production to it in one transaction', async () => {
      const promptset = await promptsetWithVersions(db, 'create live', 1)
      const created = await createPromptVersion(db, {
        promptsetId: promptset.id, value: 'v2', variables: [], model: 'm', modelSettings: {}, tags: [], note: '', spanId: null, live: true, movedBy: { keyId: promptset.keyId },
      })
      assert.deepEqual([created.version, created.live, created.labels], [2, true, ['production']])
      assert.deepEqual((await history(db, promptset.id)).map((move) => [move.label, move.fromVersion, move.toVersion, move.movedByKeyPrefix]), [['production', null, 2, 'tw_proj_crea']])
    })

    it('lets the database refuse a second row for a label, a foreign version and a malformed name', async () => {
      const mine = await promptsetWithVersions(db, 'mine', 2)
      const theirs = await promptsetWithVersions(db, 'theirs', 5)
      await db.insertInto('prompt_labels').values({ promptset_id: mine.id, name: 'staging', version: 1 }).execute()
      await assert.rejects(db.insertInto('prompt_labels').values({ promptset_id: mine.id, name: 'staging', version: 2 }).execute(), /prompt_labels_pkey/)
      // Version 5 exists, but in another promptset.
      await assert.rejects(db.insertInto('prompt_labels').values({ promptset_id: mine.id, name: 'other', version: 5 }).execute(), /prompt_labels_version_fkey/)
      for (const name of ['Staging', '', 'a'.repeat(37), 'with space', '.', '..', 'ünï']) {
        await assert.rejects(db.insertInto('prompt_labels').values({ promptset_id: mine.id, name, version: 1 }).execute(), /prompt_labels_name_check/, name)
      }
      for (const name of ['a'.repeat(36), 'v1.2-rc_3', '...', '.hidden']) await db.insertInto('prompt_labels').values({ promptset_id: mine.id, name, version: 2 }).execute()
      assert.deepEqual(await listPromptLabels(db, theirs.id), [])
    })

    it('cascades a promptset deletion to its labels and their history', async () => {
      const promptset = await promptsetWithVersions(db, 'doomed', 1)
      await moveLabel(db, { promptsetId: promptset.id, label: 'production', version: 1, movedBy: { keyId: promptset.keyId } })
      await db.deleteFrom('promptsets').where('id', '=', promptset.id).execute()
      assert.deepEqual(await labelRows(db, promptset.id), [])
      assert.deepEqual(await history(db, promptset.id), [])
    })
  })
}

// Two real transactions on two connections of the real Postgres (PGlite has one connection).
describe('concurrent label moves on postgres', () => {
  let database: TestDatabase
  let db: Db
  before(async () => {
    database = await createTestDatabase({ poolSize: 6 })
    db = database.db
  })
  after(() => database.drop())

  /** Runs `work` with a transaction left open for it to commit; rolled back if it does not. */
  async function withOpenTransaction(work: (open: ControlledTransaction<Database>) => Promise<void>): Promise<void> {
    const open = await db.startTransaction().execute()
    try {
      await work(open)
    } finally {
      if (!open.isCommitted && !open.isRolledBack) await open.rollback().execute()
    }
  }

  /** Waits until some statement of this database waits for a lock another transaction holds. */
  async function untilSomeoneWaitsForALock(): Promise<void> {
    for (let attempt = 0; attempt < 200; attempt++) {
      // A row or key wait is on the other transaction's id, a lock that names no database.
      const { rows } = await sql<{ waiting: number }>`
        select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(db)
      if ((rows[0]?.waiting ?? 0) > 0) return
      await sleep(10)
    }
    assert.fail('no statement ever waited for the lock')
  }

  it('applies two concurrent moves of one label one after the other: the later one wins, the history chains', async () => {
    const promptset = await promptsetWithVersions(db, 'race', 3)
    await moveLabel(db, { promptsetId: promptset.id, label: 'staging', version: 1, movedBy: null })

    let second: Promise<LabelMoveResult> | undefined
    await withOpenTransaction(async (first) => {
      assert.equal((await moveLabel(first, { promptsetId: promptset.id, label: 'staging', version: 2, movedBy: { keyId: promptset.keyId } })).kind, 'moved')
      second = moveLabel(db, { promptsetId: promptset.id, label: 'staging', version: 3, movedBy: null })
      await untilSomeoneWaitsForALock()
      // While the first is uncommitted, readers still see the label where it was.
      assert.deepEqual(await labelRows(db, promptset.id), [{ name: 'staging', version: 1 }])
      await first.commit().execute()
    })

    assert.deepEqual(await second, { kind: 'moved', label: (await listPromptLabels(db, promptset.id))[0], previousVersion: 2 })
    assert.deepEqual(await labelRows(db, promptset.id), [{ name: 'staging', version: 3 }])
    const moves = await history(db, promptset.id, 'staging')
    assert.deepEqual(moves.map((move) => [move.fromVersion, move.toVersion, move.movedByKeyId]), [[2, 3, null], [1, 2, promptset.keyId], [null, 1, null]])
  })

  it('lets exactly one of two concurrent conditional moves from the same version win', async () => {
    const promptset = await promptsetWithVersions(db, 'cas', 3)
    await moveLabel(db, { promptsetId: promptset.id, label: 'production', version: 1, movedBy: null })

    let second: Promise<LabelMoveResult> | undefined
    await withOpenTransaction(async (first) => {
      await moveLabel(first, { promptsetId: promptset.id, label: 'production', version: 2, expectedVersion: 1, movedBy: null })
      second = moveLabel(db, { promptsetId: promptset.id, label: 'production', version: 3, expectedVersion: 1, movedBy: null })
      await untilSomeoneWaitsForALock()
      await first.commit().execute()
    })

    assert.deepEqual(await second, { kind: 'conflict', currentVersion: 2 })
    assert.deepEqual(await labelRows(db, promptset.id), [{ name: 'production', version: 2 }])
    assert.deepEqual((await history(db, promptset.id)).map((move) => [move.fromVersion, move.toVersion]), [[1, 2], [null, 1]])
    const live = await db.selectFrom('prompts').select('version').where('promptset_id', '=', promptset.id).where('live', '=', true).execute()
    assert.deepEqual(live, [{ version: 2 }])
  })

  it('refuses a second row for one label in the database itself, even between transactions that skip the promptset lock', async () => {
    const promptset = await promptsetWithVersions(db, 'raw', 2)
    let second: Promise<unknown> | undefined
    await withOpenTransaction(async (first) => {
      await first.insertInto('prompt_labels').values({ promptset_id: promptset.id, name: 'staging', version: 1 }).execute()
      second = db.insertInto('prompt_labels').values({ promptset_id: promptset.id, name: 'staging', version: 2 }).execute()
      second.catch(() => {}) // awaited below; not an unhandled rejection meanwhile
      await untilSomeoneWaitsForALock()
      await first.commit().execute()
    })
    await assert.rejects(second as Promise<unknown>, /prompt_labels_pkey/)
    assert.deepEqual(await labelRows(db, promptset.id), [{ name: 'staging', version: 1 }])
  })

  it('leaves one label and an unbroken history after many concurrent moves', async () => {
    const promptset = await promptsetWithVersions(db, 'many', 5)
    const targets = [1, 2, 3, 4, 5, 4, 3, 2, 1, 5, 2, 4]
    const results = await Promise.all(targets.map((version) => moveLabel(db, { promptsetId: promptset.id, label: 'production', version, movedBy: null })))
    assert.ok(results.every((result) => result.kind === 'moved' || result.kind === 'unchanged'))
    const rows = await labelRows(db, promptset.id)
    assert.equal(rows.length, 1)
    const moves = await history(db, promptset.id)
    assertChained(moves, null)
    assert.equal(moves[0]?.toVersion, rows[0]?.version)
    const live = await db.selectFrom('prompts').select('version').where('promptset_id', '=', promptset.id).where('live', '=', true).execute()
    assert.deepEqual(live, [{ version: rows[0]?.version }])
  })
})
