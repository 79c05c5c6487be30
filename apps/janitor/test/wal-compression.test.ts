import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { createDb, sql } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { probeWalCompression } from '../src/cleanup/wal-compression.ts'

describe('compressing the WAL of the janitor’s deletes', () => {
  let testDb: TestDatabase
  // A login role of this test's own (roles are cluster-wide, so a random name), without privileges.
  const role = `tw_janitor_${randomBytes(4).toString('hex')}`
  const urlAs = (user: string) => {
    const url = new URL(testDb.url)
    url.username = user
    return url.toString()
  }
  before(async () => {
    testDb = await createTestDatabase()
    await sql.raw(`create role ${role} login`).execute(testDb.db)
  })
  after(async () => {
    await sql.raw(`drop role if exists ${role}`).execute(testDb.db)
    await testDb.drop()
  })

  it('uses lz4 as a superuser, nothing as a role that may not set it, and lz4 once granted', async () => {
    assert.equal(await probeWalCompression(testDb.db), 'lz4')
    const asRole = createDb({ databaseUrl: urlAs(role), poolSize: 1 })
    try {
      assert.equal(await probeWalCompression(asRole), null)
      await sql.raw(`grant set on parameter wal_compression to ${role}`).execute(testDb.db)
      assert.equal(await probeWalCompression(asRole), 'lz4')
      // The setting is the transaction's own: the pooled connection keeps the server's.
      const { rows } = await sql<{ setting: string }>`select current_setting('wal_compression') as setting`.execute(asRole)
      assert.equal(rows[0]?.setting, (await sql<{ setting: string }>`select current_setting('wal_compression') as setting`.execute(testDb.db)).rows[0]?.setting)
    } finally {
      await asRole.destroy()
      await sql.raw(`revoke set on parameter wal_compression from ${role}`).execute(testDb.db)
    }
  })
})
