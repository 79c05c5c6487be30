import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { defaultPartitionName, countSpans, createProject, createPromptVersion, createPromptset, createTeam, deleteOldestSpansBefore, findLivePrompt, findTeamProject, findTraceSpans, getRetentionPolicy, listApiKeys, insertApiKey, searchTraces, nanosToIsoMicros, revokeApiKey, setLiveVersion, upsertRetentionPolicy, withAdvisoryLock, findApiKeyIdentityByHash, findApiKeyOwnerById, type Db, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeAndSummarise } from './support/store-and-summarise.ts'

function span(overrides: Partial<SpanInsert> = {}): SpanInsert {
  return {
    projectId: 'proj', traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', parentSpanId: null,
    name: 'openai.chat', kind: 3, startTimeUnixNano: '1732137930275984123', endTimeUnixNano: '1732137931083383000',
    durationNs: '807398877', traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: '1.0',
    scopeName: 'scope', scopeVersion: '2', llmVendor: 'openai', llmModel: 'gpt-4o', llmRequestType: 'chat_completion',
    inputTokens: 14, outputTokens: 2, totalTokens: 16,
    attributes: { 'llm.request.messages': { stringValue: '[{"role":"user","content":"Quote \\"x\\" ✓"}]' } },
    resourceAttributes: { 'service.name': { stringValue: 'svc' } },
    events: [], links: [],
    ...overrides,
  }
}

describe('nanosToIsoMicros', () => {
  it('keeps microseconds and pads small values', () => {
    assert.equal(nanosToIsoMicros('1732137930275984123'), '2024-11-20T21:25:30.275984Z')
    assert.equal(nanosToIsoMicros('5000'), '1970-01-01T00:00:00.000005Z')
  })
})

for (const engine of engines) {
  describe(`repositories on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('stores spans idempotently with microsecond times and every field', async () => {
      assert.equal(await storeAndSummarise(db, [span(), span({ spanId: 'c7ad6b7169203331', parentSpanId: 'b7ad6b7169203331' })]), 2)
      assert.equal(await storeAndSummarise(db, [span(), span({ spanId: 'd7ad6b7169203331' })]), 1)
      assert.equal(await countSpans(db, 'proj'), 3)
      const [root] = await findTraceSpans(db, 'proj', '0af7651916cd43dd8448eb211c80319c')
      assert.equal(root?.startTime, '2024-11-20T21:25:30.275984Z')
      assert.equal(root?.startTimeUnixNano, '1732137930275984000')
      assert.equal(root?.durationNs, '807398877')
      assert.equal(root?.totalTokens, 16)
      assert.deepEqual(root?.attributes, span().attributes)
    })

    it('reads a span at the epoch back as 0 ns, without stray zeros', async () => {
      await storeAndSummarise(db, [span({ projectId: 'epoch', startTimeUnixNano: '1', endTimeUnixNano: '999', durationNs: '998' })])
      const [stored] = await findTraceSpans(db, 'epoch', span().traceId)
      assert.deepEqual([stored?.startTimeUnixNano, stored?.endTimeUnixNano, stored?.startTime], ['0', '0', '1970-01-01T00:00:00.000000Z'])
    })

    it('reads back attribute keys that JSON writes with escapes, intact', async () => {
      // Short keys of one decoded length, with and without a backslash, each alone in its map:
      // V8's JSON.parse returned `k\` for `"k\t"` once it had read `"k\\"` (see @tracewell/json-text).
      const keys = ['k\\', 'k\t', 'k"', 'k\u001c', 'k\n', 'k/', '__proto__', 'ab\\', 'ab\t']
      const spans = Array.from({ length: 3 * keys.length }, (_, i) => {
        const attributes: SpanInsert['attributes'] = {}
        Object.defineProperty(attributes, keys[i % keys.length]!, { value: { intValue: `${i}` }, enumerable: true })
        return span({ projectId: 'escaped-keys', spanId: `${i + 1}`.padStart(16, 'e'), attributes, events: [{ timeUnixNano: '1', name: 'e', attributes }] })
      })
      await storeAndSummarise(db, spans)
      const stored = await findTraceSpans(db, 'escaped-keys', span().traceId)
      assert.equal(stored.length, spans.length)
      for (const original of spans) {
        const read = stored.find((candidate) => candidate.spanId === original.spanId)
        assert.deepStrictEqual(read?.attributes, original.attributes)
        assert.deepStrictEqual(read?.events, original.events)
      }
    })

    it('lists traces newest first with cursor paging', async () => {
      const base = 1_800_000_000_000_000_000n
      const spans = Array.from({ length: 5 }, (_, i) =>
        span({ projectId: 'paged', traceId: `${i}`.padStart(32, 'a'), startTimeUnixNano: `${base + BigInt(i) * 1000n}`, endTimeUnixNano: `${base + BigInt(i) * 1000n + 5000n}` }),
      )
      await storeAndSummarise(db, spans)
      const page = { projectId: 'paged', limit: 2, sort: 'time', order: 'desc' } as const
      const first = await searchTraces(db, page)
      assert.deepEqual(first.traces.map((t) => t.traceId), [spans[4]!.traceId, spans[3]!.traceId])
      assert.ok(first.next)
      const second = await searchTraces(db, { ...page, cursor: first.next })
      assert.deepEqual(second.traces.map((t) => t.traceId), [spans[2]!.traceId, spans[1]!.traceId])
      const third = await searchTraces(db, { ...page, cursor: second.next! })
      assert.deepEqual(third.traces.map((t) => t.traceId), [spans[0]!.traceId])
      assert.equal(third.next, null)
      assert.equal(first.traces[0]?.durationMs, 0.005)
      assert.deepEqual(first.traces[0]?.models, ['gpt-4o'])
    })

    it('deletes old spans in bounded batches, oldest first, naming the latest start each batch deleted', async () => {
      // Seven old spans a second apart from 1998-07-09T16:00:00Z, given newest first.
      const startOf = (i: number) => (900_000_000_000_000_000n + BigInt(i) * 1_000_000_000n).toString()
      const old = Array.from({ length: 7 }, (_, i) => span({ projectId: 'old', spanId: `${7 - i}`.padStart(16, '0'), startTimeUnixNano: startOf(6 - i), endTimeUnixNano: startOf(6 - i) }))
      await storeAndSummarise(db, [...old, span({ projectId: 'old', spanId: 'f'.repeat(16), startTimeUnixNano: '1900000000000000000', endTimeUnixNano: '1900000000000000000' })])
      const cutoff = new Date('2000-01-01T00:00:00Z')
      assert.deepEqual(await deleteOldestSpansBefore(db, defaultPartitionName('spans'), 'old', cutoff, 5), { deleted: 5, latestStart: new Date('1998-07-09T16:00:04Z') })
      assert.deepEqual(await deleteOldestSpansBefore(db, defaultPartitionName('spans'), 'old', cutoff, 5), { deleted: 2, latestStart: new Date('1998-07-09T16:00:06Z') })
      assert.deepEqual(await deleteOldestSpansBefore(db, defaultPartitionName('spans'), 'old', cutoff, 5), { deleted: 0, latestStart: null })
      assert.equal(await countSpans(db, 'old'), 1)
    })

    it('allocates distinct consecutive prompt versions under concurrent creates', async () => {
      const team = await createTeam(db, { name: 'prompts' })
      const project = await createProject(db, { teamId: team.id, name: 'p' })
      const promptset = await createPromptset(db, { projectId: project.id, name: 'r' })
      const created = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          createPromptVersion(db, { promptsetId: promptset.id, value: `v${i}`, variables: [], model: 'm', modelSettings: {}, tags: [], note: '', spanId: null, live: i === 3 }),
        ),
      )
      assert.deepEqual(created.map((p) => p.version).sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8])
      const result = await setLiveVersion(db, promptset.id, 5)
      assert.equal(result.kind === 'ok' && result.live?.version, 5)
      assert.equal((await findLivePrompt(db, promptset.id))?.version, 5)
      assert.deepEqual(await setLiveVersion(db, promptset.id, 99), { kind: 'version-not-found' })
      assert.deepEqual(await setLiveVersion(db, promptset.id, null), { kind: 'ok', live: null })
      assert.equal(await findLivePrompt(db, promptset.id), undefined)
    })

    it('scopes projects and keys to their team', async () => {
      const mine = await createTeam(db, { name: 'mine' })
      const theirs = await createTeam(db, { name: 'theirs' })
      const project = await createProject(db, { teamId: theirs.id, name: 'p' })
      assert.equal(await findTeamProject(db, mine.id, project.id), undefined)
      const key = await insertApiKey(db, { kind: 'project', teamId: theirs.id, projectId: project.id, keyHash: 'scoped', prefix: 'tw_proj_ab' })
      assert.equal(await revokeApiKey(db, mine.id, key.id), false)
      assert.equal(await revokeApiKey(db, theirs.id, key.id), true)
      assert.equal((await findApiKeyIdentityByHash(db, 'scoped'))?.revoked, true)
      assert.deepEqual(await findApiKeyOwnerById(db, key.id), { id: key.id, kind: 'project', teamId: theirs.id, projectId: project.id, revoked: true, scopes: null, createdByUserId: null, expiresAt: null, teamName: 'theirs' })
      assert.equal(await findApiKeyOwnerById(db, 'no-such-key'), undefined)
      const listed = await listApiKeys(db, { teamId: theirs.id, projectId: project.id })
      assert.deepEqual(Object.keys(listed[0]!).sort(), ['createdAt', 'createdBy', 'expiresAt', 'id', 'kind', 'lastUsedAt', 'prefix', 'revokedAt', 'scopes'])
    })

    it('reads a missing retention policy as disabled, 30 days', async () => {
      assert.deepEqual(await getRetentionPolicy(db, 'none'), { projectId: 'none', enabled: false, retentionDays: 30, lastRunAt: null, lastDeletedSpans: null })
      const team = await createTeam(db, { name: 'retention' })
      const project = await createProject(db, { teamId: team.id, name: 'p' })
      const saved = await upsertRetentionPolicy(db, { projectId: project.id, enabled: true, retentionDays: 9 })
      assert.equal(saved.retentionDays, 9)
      assert.equal((await upsertRetentionPolicy(db, { projectId: project.id, enabled: false, retentionDays: 10 })).enabled, false)
    })

    it('lets one holder at a time take an advisory lock', async () => {
      let release!: () => void
      const holding = withAdvisoryLock(db, 42n, () => new Promise<void>((resolve) => (release = resolve)))
      await new Promise((resolve) => setTimeout(resolve, 50))
      assert.deepEqual(await withAdvisoryLock(db, 42n, async () => 'second'), { acquired: false })
      release()
      assert.equal((await holding).acquired, true)
      assert.deepEqual(await withAdvisoryLock(db, 42n, async () => 'third'), { acquired: true, value: 'third' })
    })
  })
}
