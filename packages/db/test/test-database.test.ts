import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { after, describe, it } from 'node:test'
import { testEnvironment } from '@tracewell/config'
import pg from 'pg'
import { createTestDatabase, type TestDatabase } from '../src/testing/test-database.ts'

async function databaseNames(): Promise<string[]> {
  const client = new pg.Client({ connectionString: testEnvironment().DATABASE_URL })
  await client.connect()
  try {
    const { rows } = await client.query<{ datname: string }>(`select datname from pg_database where datname like 'tracewell_test_%'`)
    return rows.map((row) => row.datname)
  } finally {
    await client.end()
  }
}

async function createDatabase(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: testEnvironment().DATABASE_URL })
  await client.connect()
  try {
    await client.query(`create database "${name}"`)
  } finally {
    await client.end()
  }
}

describe('test databases', () => {
  const made: TestDatabase[] = []
  after(async () => {
    for (const database of made) await database.drop()
  })

  it('drops the clones a killed run left behind, and keeps those of live runs', async () => {
    // A process that has exited: its pid names a run that can no longer drop its clones.
    const deadPid = spawnSync(process.execPath, ['-e', '0']).pid
    assert.ok(deadPid)
    const leftover = `tracewell_test_${deadPid}_0123456789ab`
    await createDatabase(leftover)
    made.push(await createTestDatabase({ poolSize: 1 }))
    made.push(await createTestDatabase({ poolSize: 1 }))

    const names = await databaseNames()
    assert.ok(!names.includes(leftover), 'the dead run’s clone is dropped')
    const own = names.filter((name) => name.startsWith(`tracewell_test_${process.pid}_`))
    assert.equal(own.length, 2, 'this run’s clones stay')
  })
})
