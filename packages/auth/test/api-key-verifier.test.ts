import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createProject, createTeam, findApiKeyIdentityByHash, insertApiKey, revokeApiKey, touchApiKeys, type Db } from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import { ApiKeyVerifier, displayPrefix, generateApiKey, hashApiKey } from '../src/index.ts'

describe('ApiKeyVerifier against the real database', () => {
  let db: Db
  let drop: () => Promise<void>
  let teamId: string
  let projectId: string
  before(async () => {
    ;({ db, drop } = await createTestDatabase())
    teamId = (await createTeam(db, { name: 'team' })).id
    projectId = (await createProject(db, { teamId, name: 'project' })).id
  })
  after(() => drop())

  async function storeKey(): Promise<{ secret: string; id: string }> {
    const secret = generateApiKey('project')
    const { id } = await insertApiKey(db, { kind: 'project', teamId, projectId, keyHash: hashApiKey(secret), prefix: displayPrefix(secret) })
    return { secret, id }
  }

  function verifierWithClock(ttlMs: number) {
    let now = Date.now()
    let lookups = 0
    const verifier = new ApiKeyVerifier({
      ttlMs,
      lookup: (hash) => {
        lookups++
        return findApiKeyIdentityByHash(db, hash)
      },
      touch: (ids, at) => touchApiKeys(db, ids, at),
      now: () => now,
    })
    return { verifier, advance: (ms: number) => (now += ms), lookups: () => lookups }
  }

  it('accepts a stored key and serves repeats from the cache', async () => {
    const { secret, id } = await storeKey()
    const { verifier, lookups } = verifierWithClock(5000)
    const results = await Promise.all(Array.from({ length: 20 }, () => verifier.verify(secret)))
    assert.deepEqual(results[0], { id, kind: 'project', teamId, projectId })
    assert.equal(lookups(), 1)
    await verifier.close()
  })

  it('refuses a revoked key once the 5 s bound has passed, and not a moment later', async () => {
    const { secret, id } = await storeKey()
    const { verifier, advance } = verifierWithClock(5000)
    assert.ok(await verifier.verify(secret))
    await revokeApiKey(db, teamId, id)
    advance(4999)
    assert.ok(await verifier.verify(secret), 'still trusted inside the bound')
    advance(2)
    assert.equal(await verifier.verify(secret), null)
    await verifier.close()
  })

  it('forgets a key at once, even when it is recognised by its text without hashing', async () => {
    const { secret, id } = await storeKey()
    const { verifier, lookups } = verifierWithClock(5000)
    assert.ok(await verifier.verify(secret))
    assert.ok(await verifier.verify(secret), 'a repeat is answered from the cache')
    assert.equal(lookups(), 1)
    await revokeApiKey(db, teamId, id)
    verifier.forget(hashApiKey(secret))
    assert.equal(await verifier.verify(secret), null, 'refused without waiting for the TTL')
    assert.equal(lookups(), 2)
    await verifier.close()
  })

  it('refuses unknown and malformed keys', async () => {
    const { verifier } = verifierWithClock(5000)
    assert.equal(await verifier.verify(generateApiKey('project')), null)
    assert.equal(await verifier.verify(''), null)
    assert.equal(await verifier.verify('x'.repeat(10_000)), null)
    await verifier.close()
  })

  it('records lastUsedAt in a batch, not per request', async () => {
    const { secret, id } = await storeKey()
    const { verifier } = verifierWithClock(5000)
    await verifier.verify(secret)
    const before = await db.selectFrom('api_keys').select('last_used_at').where('id', '=', id).executeTakeFirstOrThrow()
    assert.equal(before.last_used_at, null)
    await verifier.flushUsage()
    const afterFlush = await db.selectFrom('api_keys').select('last_used_at').where('id', '=', id).executeTakeFirstOrThrow()
    assert.ok(afterFlush.last_used_at instanceof Date)
    await verifier.close()
  })

  it('stores only the hash and prefix, never the secret', async () => {
    const { secret, id } = await storeKey()
    const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
    assert.ok(!JSON.stringify(row).includes(secret))
    assert.equal(row.key_hash, hashApiKey(secret))
  })
})

describe('ApiKeyVerifier usage records', () => {
  it('records the use of a key answered from the cache, not only of the first lookup', async () => {
    const touched: string[][] = []
    const verifier = new ApiKeyVerifier({
      ttlMs: 5000,
      lookup: async () => ({ id: 'k', kind: 'project', teamId: 't', projectId: 'p', revoked: false }),
      touch: async (ids) => void touched.push(ids),
    })
    await verifier.verify('secret')
    await verifier.flushUsage()
    await verifier.verify('secret')
    await verifier.flushUsage()
    assert.deepEqual(touched, [['k'], ['k']])
    await verifier.close()
  })
})

describe('ApiKeyVerifier timing', () => {
  it('counts a cached entry from before its lookup, so a slow read cannot stretch the bound', async () => {
    let now = 0
    const verifier = new ApiKeyVerifier({
      ttlMs: 5000,
      lookup: async () => {
        now += 3000 // the read takes 3 s
        return { id: 'k', kind: 'project', teamId: 't', projectId: 'p', revoked: false }
      },
      touch: async () => {},
      now: () => now,
    })
    assert.ok(await verifier.verify('secret'))
    now = 5001 // 5 s after the read started, 2 s after it ended
    await verifier.verify('secret')
    assert.equal(now, 8001, 'the entry had expired, so the key was looked up again')
    await verifier.close()
  })
})
