import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { displayPrefix } from '@tracewell/auth'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

describe('prompt labels (management API)', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  let keyId: string

  const request = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, key = ws.projectKey) =>
    cp.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) })
  const getPrompt = (query: string) => request('GET', `/api/promptset?${query}`)

  /** A promptset with versions v1…vN; v1 is live (production) when `live`. */
  async function promptsetWithVersions(name: string, versions: number, live = true): Promise<string> {
    const id = (await request('POST', '/api/promptsets', { name })).json().id as string
    for (let version = 1; version <= versions; version++) {
      const created = await request('POST', `/api/promptsets/${id}/prompts`, { value: `${name} v${version}`, model: 'm', live: live && version === 1 })
      assert.equal(created.statusCode, 201)
    }
    return id
  }

  const labelRows = async (promptsetId: string) =>
    (await cp.db.selectFrom('prompt_labels').select(['name', 'version']).where('promptset_id', '=', promptsetId).orderBy('name').execute()).map((row) => [row.name, row.version])
  const moveRows = async (promptsetId: string) =>
    (
      await cp.db
        .selectFrom('prompt_label_moves')
        .select(['label', 'from_version', 'to_version', 'moved_by_key_id', 'moved_by_key_prefix'])
        .where('promptset_id', '=', promptsetId)
        .orderBy('id')
        .execute()
    ).map((row) => [row.label, row.from_version, row.to_version, row.moved_by_key_id, row.moved_by_key_prefix])

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
    const key = await cp.db.selectFrom('api_keys').select('id').where('project_id', '=', ws.projectId).executeTakeFirstOrThrow()
    keyId = key.id
  })
  after(() => cp.close())

  it('lists, moves and removes labels, and lists each version’s labels', async () => {
    const id = await promptsetWithVersions('moves', 3)
    const prefix = displayPrefix(ws.projectKey)

    const listed = await request('GET', `/api/promptsets/${id}/labels`)
    assert.equal(listed.statusCode, 200)
    assert.deepEqual(listed.json().labels.map((label: { name: string; version: number }) => [label.name, label.version]), [['production', 1]])

    const moved = await request('PUT', `/api/promptsets/${id}/labels/staging`, { version: 2 })
    assert.equal(moved.statusCode, 200)
    const body = moved.json()
    assert.deepEqual({ ...body, label: { ...body.label, updatedAt: 'd' } }, { label: { name: 'staging', version: 2, updatedAt: 'd' }, previousVersion: null, moved: true })
    assert.equal(new Date(body.label.updatedAt).toISOString(), body.label.updatedAt)

    const again = await request('PUT', `/api/promptsets/${id}/labels/staging`, { version: 2 })
    assert.deepEqual([again.statusCode, again.json()], [200, { label: body.label, previousVersion: 2, moved: false }])

    const promptset = (await request('GET', `/api/promptsets/${id}`)).json()
    assert.deepEqual(promptset.prompts.map((prompt: { version: number; live: boolean; labels: string[] }) => [prompt.version, prompt.live, prompt.labels]), [
      [1, true, ['production']],
      [2, false, ['staging']],
      [3, false, []],
    ])
    assert.deepEqual(await labelRows(id), [['production', 1], ['staging', 2]])

    const removed = await request('DELETE', `/api/promptsets/${id}/labels/staging`)
    assert.deepEqual([removed.statusCode, removed.body], [204, ''])
    assert.deepEqual(await labelRows(id), [['production', 1]])
    const removedAgain = await request('DELETE', `/api/promptsets/${id}/labels/staging`)
    assert.deepEqual([removedAgain.statusCode, removedAgain.json()], [404, { message: 'Prompt label staging not found' }])

    // One row per move that changed something, with the key that made it.
    assert.deepEqual(await moveRows(id), [
      ['production', null, 1, keyId, prefix],
      ['staging', null, 2, keyId, prefix],
      ['staging', 2, null, keyId, prefix],
    ])
  })

  it('answers 404 for an unknown version and 409 when the label is not where the caller expects it, changing nothing', async () => {
    const id = await promptsetWithVersions('refusals', 3)
    await request('PUT', `/api/promptsets/${id}/labels/staging`, { version: 2 })
    const before = await moveRows(id)

    const unknown = await request('PUT', `/api/promptsets/${id}/labels/staging`, { version: 9 })
    assert.deepEqual([unknown.statusCode, unknown.json()], [404, { message: 'Prompt version 9 not found' }])
    const moved = await request('PUT', `/api/promptsets/${id}/labels/staging`, { version: 3, expectedVersion: 1 })
    assert.deepEqual([moved.statusCode, moved.json()], [409, { message: 'Prompt label staging is at version 2; expected it at version 1' }])
    const exists = await request('PUT', `/api/promptsets/${id}/labels/staging`, { version: 3, expectedVersion: null })
    assert.deepEqual([exists.statusCode, exists.json()], [409, { message: 'Prompt label staging is at version 2; expected it not set' }])
    const absent = await request('PUT', `/api/promptsets/${id}/labels/canary`, { version: 3, expectedVersion: 2 })
    assert.deepEqual([absent.statusCode, absent.json()], [409, { message: 'Prompt label canary is not set; expected it at version 2' }])

    assert.deepEqual(await labelRows(id), [['production', 1], ['staging', 2]])
    assert.deepEqual(await moveRows(id), before)

    const expected = await request('PUT', `/api/promptsets/${id}/labels/staging`, { version: 3, expectedVersion: 2 })
    assert.deepEqual([expected.statusCode, expected.json().previousVersion, expected.json().label.version], [200, 2, 3])
  })

  it('lets exactly one of two concurrent moves expecting the same version win', async () => {
    const id = await promptsetWithVersions('race', 3)
    const [first, second] = await Promise.all([
      request('PUT', `/api/promptsets/${id}/labels/production`, { version: 2, expectedVersion: 1 }),
      request('PUT', `/api/promptsets/${id}/labels/production`, { version: 3, expectedVersion: 1 }),
    ])
    const statuses = [first?.statusCode, second?.statusCode].sort()
    assert.deepEqual(statuses, [200, 409])
    const winner = (first?.statusCode === 200 ? first : second)?.json().label.version as number
    const loser = first?.statusCode === 409 ? first : second
    assert.deepEqual(loser?.json(), { message: `Prompt label production is at version ${winner}; expected it at version 1` })
    assert.deepEqual(await labelRows(id), [['production', winner]])
    assert.deepEqual((await moveRows(id)).map((row) => row.slice(0, 3)), [['production', null, 1], ['production', 1, winner]])
    assert.equal((await getPrompt(`promptset_id=${id}`)).json().prompts[0].version, winner)
  })

  it('rolls back by moving the label to where the history says it was', async () => {
    const id = await promptsetWithVersions('rollback', 3)
    await request('PUT', `/api/promptsets/${id}/labels/production`, { version: 3 })
    assert.equal((await getPrompt(`promptset_id=${id}`)).json().prompts[0].version, 3)

    const history = await request('GET', `/api/promptsets/${id}/label-history?label=production&limit=1`)
    assert.equal(history.statusCode, 200)
    const [last] = history.json().moves
    assert.deepEqual([last.label, last.fromVersion, last.toVersion, last.movedByKeyPrefix], ['production', 1, 3, displayPrefix(ws.projectKey)])
    const rolledBack = await request('PUT', `/api/promptsets/${id}/labels/production`, { version: last.fromVersion, expectedVersion: last.toVersion })
    assert.deepEqual([rolledBack.statusCode, rolledBack.json().previousVersion], [200, 3])
    assert.equal((await getPrompt(`promptset_id=${id}`)).json().prompts[0].version, 1)
  })

  it('pages the history newest first, filtered by label when asked', async () => {
    const id = await promptsetWithVersions('history', 2, false)
    for (const [label, version] of [['a', 1], ['b', 1], ['a', 2], ['b', 2], ['a', 1]] as const) {
      assert.equal((await request('PUT', `/api/promptsets/${id}/labels/${label}`, { version })).statusCode, 200)
    }
    const first = (await request('GET', `/api/promptsets/${id}/label-history?limit=2`)).json()
    assert.deepEqual(Object.keys(first.moves[0]), ['id', 'label', 'fromVersion', 'toVersion', 'movedAt', 'movedByKeyId', 'movedByKeyPrefix', 'movedByUser'])
    assert.deepEqual(first.moves.map((move: { label: string; toVersion: number }) => [move.label, move.toVersion]), [['a', 1], ['b', 2]])
    assert.equal(typeof first.nextCursor, 'string')
    const second = (await request('GET', `/api/promptsets/${id}/label-history?limit=2&cursor=${first.nextCursor}`)).json()
    assert.deepEqual(second.moves.map((move: { label: string; toVersion: number }) => [move.label, move.toVersion]), [['a', 2], ['b', 1]])
    const third = (await request('GET', `/api/promptsets/${id}/label-history?limit=2&cursor=${second.nextCursor}`)).json()
    assert.deepEqual([third.moves.map((move: { label: string; toVersion: number }) => [move.label, move.toVersion]), third.nextCursor], [[['a', 1]], null])

    const onlyA = (await request('GET', `/api/promptsets/${id}/label-history?label=a`)).json()
    assert.deepEqual(onlyA.moves.map((move: { fromVersion: number | null; toVersion: number }) => [move.fromVersion, move.toVersion]), [[2, 1], [1, 2], [null, 1]])
    assert.equal(onlyA.nextCursor, null)

    for (const cursor of ['abc', '0', '99999999999999999999', '9223372036854775808']) {
      const bad = await request('GET', `/api/promptsets/${id}/label-history?cursor=${cursor}`)
      assert.deepEqual([bad.statusCode, bad.json()], [400, { message: 'querystring/cursor: not a nextCursor returned by this API' }], cursor)
    }
    const badLimit = await request('GET', `/api/promptsets/${id}/label-history?limit=201`)
    assert.deepEqual([badLimit.statusCode, badLimit.json()], [400, { message: 'querystring/limit: must be <= 200' }])
  })

  it('keeps PUT /live as a move of production, recorded like any other', async () => {
    const id = await promptsetWithVersions('live', 2)
    const live = await request('PUT', `/api/promptsets/${id}/live`, { version: 2 })
    assert.equal(live.statusCode, 200)
    assert.deepEqual([live.json().live.version, live.json().live.live, live.json().live.labels], [2, true, ['production']])
    assert.deepEqual(await labelRows(id), [['production', 2]])

    const cleared = await request('PUT', `/api/promptsets/${id}/live`, { version: null })
    assert.deepEqual([cleared.statusCode, cleared.json()], [200, { live: null }])
    assert.deepEqual(await labelRows(id), [])
    assert.deepEqual((await moveRows(id)).map((row) => row.slice(0, 4)), [['production', null, 1, keyId], ['production', 1, 2, keyId], ['production', 2, null, keyId]])
  })

  it('treats removing production as "nothing is live": the default lookup is a 404 until it is set again', async () => {
    const id = await promptsetWithVersions('no production', 2)
    await request('PUT', `/api/promptsets/${id}/labels/staging`, { version: 2 })
    assert.equal((await request('DELETE', `/api/promptsets/${id}/labels/production`)).statusCode, 204)
    const none = await getPrompt(`promptset_id=${id}`)
    assert.deepEqual([none.statusCode, none.json()], [404, { message: 'No live prompt in this registry; pass a version' }])
    const asLabel = await getPrompt(`promptset_id=${id}&label=production`)
    assert.deepEqual([asLabel.statusCode, asLabel.json()], [404, { message: 'Prompt label production not found' }])
    assert.equal((await getPrompt(`promptset_id=${id}&label=staging`)).json().prompts[0].version, 2)
    assert.deepEqual((await request('GET', `/api/promptsets/${id}`)).json().prompts.map((prompt: { live: boolean }) => prompt.live), [false, false])

    await request('PUT', `/api/promptsets/${id}/labels/production`, { version: 2 })
    assert.equal((await getPrompt(`promptset_id=${id}`)).json().prompts[0].version, 2)
  })

  it('validates label names and bodies (400), changing nothing', async () => {
    const id = await promptsetWithVersions('validation', 1)
    const pattern = 'must match pattern "^(?!\\.\\.?$)[a-z0-9_.-]{1,36}$"'
    // `.` and `..` never arrive as a path segment (URL clients resolve them away; the pattern
    // refuses them so that no label exists that could not be moved): see the query below.
    for (const name of ['Staging', 'a'.repeat(37), 'with%20space', '%C3%BC']) {
      for (const response of [await request('PUT', `/api/promptsets/${id}/labels/${name}`, { version: 1 }), await request('DELETE', `/api/promptsets/${id}/labels/${name}`)]) {
        assert.deepEqual([response.statusCode, response.json()], [400, { message: `params/label: ${pattern}` }], name)
      }
    }
    const cases: [object, string][] = [
      [{}, "body: must have required property 'version'"],
      [{ version: '1' }, 'body/version: must be integer'],
      [{ version: 0 }, 'body/version: must be >= 1'],
      [{ version: null }, 'body/version: must be integer'],
      [{ version: 1, expectedVersion: 0 }, 'body/expectedVersion: must be >= 1'],
    ]
    for (const [payload, message] of cases) {
      const response = await request('PUT', `/api/promptsets/${id}/labels/staging`, payload)
      assert.deepEqual([response.statusCode, response.json()], [400, { message }], JSON.stringify(payload))
    }
    for (const name of ['UP', '.', '..']) {
      const historyLabel = await request('GET', `/api/promptsets/${id}/label-history?label=${name}`)
      assert.deepEqual([historyLabel.statusCode, historyLabel.json()], [400, { message: `querystring/label: ${pattern}` }], name)
    }
    // Every character the pattern allows, at its longest.
    const longest = 'a-b_c.d0123456789abcdefghijklmnopqrs'
    assert.equal((await request('PUT', `/api/promptsets/${id}/labels/${longest}`, { version: 1 })).statusCode, 200)
    assert.deepEqual(await labelRows(id), [[longest, 1], ['production', 1]])
  })

  it('answers 400 for a team key without project_id and 404 for another project’s promptset or an unknown one', async () => {
    const id = await promptsetWithVersions('auth', 1)
    const theirs = (await request('POST', '/api/promptsets', { name: 'theirs' }, other.projectKey)).json().id as string
    await request('POST', `/api/promptsets/${theirs}/prompts`, { value: 'v', model: 'm', live: true }, other.projectKey)
    const calls = (promptset: string, key?: string) => [
      request('GET', `/api/promptsets/${promptset}/labels`, undefined, key),
      request('PUT', `/api/promptsets/${promptset}/labels/production`, { version: 1 }, key),
      request('DELETE', `/api/promptsets/${promptset}/labels/production`, undefined, key),
      request('GET', `/api/promptsets/${promptset}/label-history`, undefined, key),
    ]
    for (const response of await Promise.all(calls(id, ws.teamKey))) {
      assert.deepEqual([response.statusCode, response.json()], [400, { message: 'querystring/project_id: required with a team key or a signed-in session' }])
    }
    const withProject = await request('GET', `/api/promptsets/${id}/labels?project_id=${ws.projectId}`, undefined, ws.teamKey)
    assert.equal(withProject.statusCode, 200, 'a team key names the project')
    for (const promptset of [theirs, 'unknown']) {
      for (const response of await Promise.all(calls(promptset))) assert.deepEqual([response.statusCode, response.json()], [404, { message: 'Prompt registry not found' }])
    }
    assert.deepEqual(await labelRows(theirs), [['production', 1]])
    assert.deepEqual(await labelRows(id), [['production', 1]])
  })
})
