import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createDb, createProject, createTeam, findApiKeyIdentitiesByHashes, insertApiKey, revokeApiKey, touchApiKeys, type Db } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { startTcpProxy, type TcpProxy } from '@tracewell/test-support'
import { ApiKeyVerifier, KeyStoreUnavailableError, displayPrefix, generateApiKey, hashApiKey } from '../src/index.ts'

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

  async function storeKey(terms: { scopes?: ('ingest' | 'read' | 'write')[]; expiresAt?: Date } = {}): Promise<{ secret: string; id: string }> {
    const secret = generateApiKey('project')
    const { id } = await insertApiKey(db, { kind: 'project', teamId, projectId, keyHash: hashApiKey(secret), prefix: displayPrefix(secret), ...terms })
    return { secret, id }
  }

  function verifierWithClock(ttlMs: number) {
    let now = Date.now()
    let lookups = 0
    const verifier = new ApiKeyVerifier({
      ttlMs,
      lookupMany: (hashes) => {
        lookups++
        return findApiKeyIdentitiesByHashes(db, hashes)
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
    assert.deepEqual(results[0], { id, kind: 'project', teamId, projectId, scopes: null, createdByUserId: null, expiresAt: null })
    assert.equal(lookups(), 1)
    await verifier.close()
  })

  it('carries a key’s scopes and expiry, and refuses it from the moment it expires, cached or not', async () => {
    const expiresAt = new Date(Date.now() + 3000)
    const { secret } = await storeKey({ scopes: ['ingest', 'read'], expiresAt })
    const { verifier, advance, lookups } = verifierWithClock(5000)
    const key = await verifier.verify(secret)
    assert.deepEqual([key?.scopes, key?.expiresAt], [['ingest', 'read'], expiresAt.getTime()])
    advance(2000)
    assert.ok(verifier.verifyCached(secret), 'trusted from the cache before it expires')
    advance(1001)
    assert.equal(verifier.verifyCached(secret), undefined, 'the cache does not outlive the key')
    assert.equal(await verifier.verify(secret), null)
    assert.equal(lookups(), 2)
    await verifier.close()
  })

  it('refuses a key stored already expired', async () => {
    const { secret } = await storeKey({ expiresAt: new Date(Date.now() - 1000) })
    const { verifier } = verifierWithClock(5000)
    assert.equal(await verifier.verify(secret), null)
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

  it('looks up a flood of different unknown keys in a few queries, not one each', async () => {
    const { secret } = await storeKey()
    const { verifier, lookups } = verifierWithClock(5000)
    const made = Array.from({ length: 500 }, () => generateApiKey('project'))
    const results = await Promise.all([...made, secret].map((key) => verifier.verify(key)))
    assert.equal(results.filter((key) => key !== null).length, 1, 'only the stored key verifies')
    assert.ok(lookups() <= 3, `${lookups()} queries for 501 keys`)
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
      lookupMany: async (hashes) =>
        new Map(hashes.map((hash) => [hash, { id: 'k', kind: 'project' as const, teamId: 't', projectId: 'p', revoked: false, scopes: null, createdByUserId: null, expiresAt: null }])),
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
      lookupMany: async (hashes) => {
        now += 3000 // the read takes 3 s
        return new Map(hashes.map((hash) => [hash, { id: 'k', kind: 'project' as const, teamId: 't', projectId: 'p', revoked: false, scopes: null, createdByUserId: null, expiresAt: null }]))
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

describe('ApiKeyVerifier through a database outage (a proxy in front of Postgres, closed and reopened)', () => {
  let database: TestDatabase
  let proxy: TcpProxy
  let proxied: Db
  let teamId: string
  let projectId: string

  before(async () => {
    database = await createTestDatabase()
    teamId = (await createTeam(database.db, { name: 'team' })).id
    projectId = (await createProject(database.db, { teamId, name: 'project' })).id
    const url = new URL(database.url)
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) })
    url.port = String(proxy.port)
    proxied = createDb({ databaseUrl: url.toString(), poolSize: 2 })
  })
  after(async () => {
    await proxied.destroy()
    await proxy.close()
    await database.drop()
  })

  async function storeKey(): Promise<{ secret: string; id: string }> {
    const secret = generateApiKey('project')
    const { id } = await insertApiKey(database.db, { kind: 'project', teamId, projectId, keyHash: hashApiKey(secret), prefix: displayPrefix(secret) })
    return { secret, id }
  }

  it('keeps keys verified before the outage working for the grace, refuses unknown ones with KeyStoreUnavailableError, and honours revocation once the store answers', async () => {
    let now = Date.now()
    const verifier = new ApiKeyVerifier({
      ttlMs: 5000,
      outageGraceMs: 60_000,
      lookupMany: (hashes) => findApiKeyIdentitiesByHashes(proxied, hashes),
      touch: async () => {},
      now: () => now,
    })
    try {
      const known = await storeKey()
      const revokedDuringOutage = await storeKey()
      assert.ok(await verifier.verify(known.secret))
      assert.ok(await verifier.verify(revokedDuringOutage.secret))

      proxy.setDown(true)
      now += 6_000 // past the TTL: the keys must be checked again, and the store cannot answer
      assert.ok(await verifier.verify(known.secret), 'a key verified before the outage still works')
      await assert.rejects(verifier.verify(generateApiKey('project')), KeyStoreUnavailableError)
      await revokeApiKey(database.db, teamId, revokedDuringOutage.id)
      assert.ok(await verifier.verify(revokedDuringOutage.secret), 'the revocation cannot be seen yet')
      now += 60_000
      await assert.rejects(verifier.verify(known.secret), KeyStoreUnavailableError, 'the grace is bounded')

      proxy.setDown(false)
      now += 1_001 // past the pause after a failed lookup
      assert.ok(await verifier.verify(known.secret), 'checked again once the store answers')
      assert.equal(await verifier.verify(revokedDuringOutage.secret), null, 'and the revocation takes effect at once')
    } finally {
      await verifier.close()
    }
  })
})
