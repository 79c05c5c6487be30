import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { addDatasetItems, createDataset, createProject, createTeam, deleteDatasetItem, findDataset, listDatasetItems, type Db } from '../src/index.ts'
import { engines } from '../src/testing/index.ts'

// Dataset versions on both engines: every change one version, none skipped or taken twice when
// changes come at once, and every earlier version readable as it was.

const item = (id: string, input: unknown) => ({ id, input, expectedOutput: null, metadata: null, sourceTraceId: null, sourceSpanId: null })

for (const engine of engines) {
  describe(`dataset versions on ${engine.name}`, { timeout: 60_000 }, () => {
    let db: Db
    let drop: () => Promise<void>
    let datasetId: string
    before(async () => {
      ;({ db, drop } = await engine.open())
      const team = await createTeam(db, { name: 't' })
      const project = await createProject(db, { teamId: team.id, name: 'p' })
      datasetId = (await createDataset(db, { projectId: project.id, name: 'd', description: '', metadata: {} })).id
    })
    after(() => drop())

    it('gives concurrent changes one version each, in a row', async () => {
      const versions = await Promise.all(Array.from({ length: 12 }, (_, index) => addDatasetItems(db, datasetId, [item(`i${index}`, index)]).then((added) => added.version)))
      assert.deepEqual(versions.toSorted((a, b) => a - b), Array.from({ length: 12 }, (_, index) => index + 1))
      const dataset = await findDataset(db, (await db.selectFrom('datasets').select('project_id').executeTakeFirstOrThrow()).project_id, datasetId)
      assert.deepEqual([dataset?.version, dataset?.itemCount], [12, 12])
      // Positions follow the versions: each item's place is the order its version was taken in.
      const items = await listDatasetItems(db, datasetId, 12)
      assert.deepEqual(items.map((row) => row.validFrom), Array.from({ length: 12 }, (_, index) => index + 1))
    })

    it('replaces and deletes by closing rows: every version reads as it was', async () => {
      const { version: replacedAt } = await addDatasetItems(db, datasetId, [item('i0', 'zero, again'), item('new', 'new')])
      const deletedAt = await deleteDatasetItem(db, datasetId, 'i1')
      assert.equal(deletedAt, replacedAt + 1)
      assert.equal(await deleteDatasetItem(db, datasetId, 'i1'), undefined)
      const before = await listDatasetItems(db, datasetId, replacedAt - 1)
      const between = await listDatasetItems(db, datasetId, replacedAt)
      const now = await listDatasetItems(db, datasetId, deletedAt as number)
      assert.deepEqual([before.length, between.length, now.length], [12, 13, 12])
      // i0's place is wherever its concurrent add's version put it; a replaced item keeps it.
      const place = before.findIndex((row) => row.id === 'i0')
      assert.deepEqual([before[place]?.input, between[place]?.input, between[place]?.id], [0, 'zero, again', 'i0'])
      assert.ok(!now.some((row) => row.id === 'i1') && between.some((row) => row.id === 'i1'))
      assert.equal(now.at(-1)?.id, 'new')
    })
  })
}
