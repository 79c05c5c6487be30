import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { after, before, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { testEnv } from './support/ingest-harness.ts'

// `npm run start:ingest` as a real process: it serves, stops on SIGTERM, and refuses a database
// whose schema is behind.

const serverPath = new URL('../src/server.ts', import.meta.url).pathname
let database: TestDatabase
before(async () => {
  database = await createTestDatabase()
})
after(async () => {
  await database.drop()
})

function startServer(env: Record<string, string>) {
  const child = spawn(process.execPath, [serverPath], { env: { REDIS_URL: testEnv.REDIS_URL, QUEUE_PREFIX: 'test-ingest-server', LOG_LEVEL: 'warn', GRPC_PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return { child, stderr: () => stderr }
}

it('serves, and shuts down cleanly on SIGTERM', async () => {
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const server = startServer({ DATABASE_URL: database.url, PORT: String(port), HOST: '127.0.0.1' })
  try {
    // Ready once Postgres and Redis both answer; a loaded machine may take a moment for either.
    let ready: Response | undefined
    for (let attempt = 0; attempt < 150 && ready?.status !== 200; attempt++) {
      ready = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined)
      if (ready?.status !== 200) await sleep(100)
    }
    assert.ok(ready, `no answer on port ${port}: ${server.stderr()}`)
    assert.equal(ready.status, 200)
    assert.deepEqual(await ready.json(), { status: 'ok', checks: { postgres: 'ok', queue: 'ok' }, details: { unwritableShards: [] } })
    const unauthorized = await fetch(`http://127.0.0.1:${port}/api/trace`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    assert.equal(unauthorized.status, 401)
    assert.deepEqual(await unauthorized.json(), { status: 401, message: 'Invalid API key' })
  } finally {
    server.child.kill('SIGTERM')
  }
  const [code] = (await once(server.child, 'exit')) as [number | null]
  assert.equal(code, 0, server.stderr())
})

it('refuses to start on a database that is behind, saying so', async () => {
  await sql`delete from kysely_migration`.execute(database.db)
  const server = startServer({ DATABASE_URL: database.url, PORT: '0' })
  const [code] = (await once(server.child, 'exit')) as [number | null]
  assert.equal(code, 1)
  assert.match(server.stderr(), /the database is behind: .*run `npm run migrate`/)
})
