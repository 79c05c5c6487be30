import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { migrateToLatest } from '../src/index.ts'
import { createTestDatabase, type TestDatabase } from '../src/testing/index.ts'

// `migrate.mjs --wait`, every Kubernetes service's init container: it applies nothing, waits
// while the migration Job applies what this version needs, and lets the service start only then.

const migrateBin = fileURLToPath(new URL('../src/bin/migrate.ts', import.meta.url))

function startWaiting(databaseUrl: string, retrySeconds: number) {
  const child = spawn(process.execPath, [migrateBin, '--wait'], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, STARTUP_RETRY_SECONDS: String(retrySeconds) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  return { child, output: () => output, exited: once(child, 'exit') as Promise<[number | null]> }
}

describe('migrate --wait', { timeout: 90_000 }, () => {
  let database: TestDatabase
  before(async () => {
    database = await createTestDatabase({ migrated: false })
  })
  after(async () => {
    await database?.drop()
  })

  it('waits on a database that is behind, applying nothing, until the migrations are applied', async () => {
    const waiting = startWaiting(database.url, 60)
    for (let attempt = 0; attempt < 100 && !waiting.output().includes('waiting for'); attempt++) await sleep(100)
    assert.match(waiting.output(), /waiting for \d+ migration\(s\) to be applied/)
    assert.equal(waiting.child.exitCode, null, 'still waiting')
    await migrateToLatest(database.db)
    const [code] = await waiting.exited
    assert.equal(code, 0, waiting.output())
    assert.match(waiting.output(), /schema is current/)
  })

  it('gives up after STARTUP_RETRY_SECONDS, saying what it waited for', async () => {
    const behind = await createTestDatabase({ migrated: false })
    try {
      const waiting = startWaiting(behind.url, 2)
      const [code] = await waiting.exited
      assert.equal(code, 1)
      assert.match(waiting.output(), /behind after 2 s \(STARTUP_RETRY_SECONDS\): has the migration Job run\?/)
      assert.deepEqual(await behind.db.introspection.getTables().then((tables) => tables.map((table) => table.name).filter((name) => name === 'spans')), [], 'applied nothing')
    } finally {
      await behind.drop()
    }
  })
})
