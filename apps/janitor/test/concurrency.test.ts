import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { testEnvironment } from '@tracewell/config'
import { countSpans, createDb, sql, withAdvisoryLock } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { buildApp, CLEANUP_LOCK_KEY } from '../src/index.ts'
import { dayMs, janitorConfig, project, removeSlowDeletes, seedSpans, slowDownDeletes } from './helpers.ts'

const serverEntry = new URL('../src/server.ts', import.meta.url).pathname
const url = '/api/cron/cleanup-traces'

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  server.close()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

interface Janitor {
  child: ChildProcess
  port: number
  output: () => string
}

async function startJanitor(databaseUrl: string, extraEnv: Record<string, string> = {}): Promise<Janitor> {
  const port = await freePort()
  // CRON_API_KEY empty: the endpoint is open, and the process must say so at start-up.
  const env = { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', CRON_API_KEY: '', ...extraEnv }
  const child = spawn(process.execPath, [serverEntry], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  return { child, port, output: () => output }
}

async function waitUntilHealthy(janitor: Janitor): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (janitor.child.exitCode !== null) throw new Error(`janitor exited: ${janitor.output()}`)
    const ok = await fetch(`http://127.0.0.1:${janitor.port}/healthz`).then((r) => r.ok, () => false)
    if (ok) return
    await sleep(100)
  }
  throw new Error(`janitor did not start: ${janitor.output()}`)
}

describe('one run at a time', () => {
  let testDb: TestDatabase
  const children: ChildProcess[] = []
  before(async () => {
    testDb = await createTestDatabase()
  })
  after(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
    await Promise.all(children.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)))
    await testDb.drop()
  })

  it('two concurrent calls to one app: one runs, the other gets 409', async () => {
    const { db } = testDb
    const id = await project(db, 'in-process', { enabled: true, retentionDays: 1 })
    await seedSpans(db, id, 1_000, new Date(Date.now() - 3 * dayMs))
    await slowDownDeletes(db, 0.05) // 10 batches of 100: the run lasts at least half a second
    try {
      const app = await buildApp(janitorConfig(testDb.url, { CLEANUP_BATCH_SIZE: '100' }), { db })
      const responses = await Promise.all([app.inject({ url }), app.inject({ method: 'POST', url })])
      const byStatus = responses.map((r) => ({ status: r.statusCode, body: r.json() })).sort((a, b) => a.status - b.status)
      assert.deepEqual(byStatus.map((r) => r.status), [200, 409])
      assert.equal(byStatus[0]?.body.deletedSpans, 1_000)
      assert.deepEqual(byStatus[1]?.body, { message: 'Cleanup already running' })
      assert.equal(await countSpans(db, id), 0)
      assert.match((await app.inject({ url: '/metrics' })).body, /tracewell_janitor_runs_total\{outcome="busy"\} 1/)
      await app.close()
    } finally {
      await removeSlowDeletes(db)
    }
  })

  it('answers 409 while any other holder has the cleanup lock, and runs once it is released', async () => {
    const { db } = testDb
    const id = await project(db, 'locked', { enabled: true, retentionDays: 1 })
    await seedSpans(db, id, 5, new Date(Date.now() - 3 * dayMs))
    const app = await buildApp(janitorConfig(testDb.url), { db })
    // The lock is taken on a connection of its own, as another replica would hold it.
    const held = await withAdvisoryLock(db, CLEANUP_LOCK_KEY, () => app.inject({ url }))
    assert.ok(held.acquired)
    assert.equal(held.value.statusCode, 409)
    assert.deepEqual(held.value.json(), { message: 'Cleanup already running' })
    assert.equal(await countSpans(db, id), 5)
    const free = await app.inject({ url })
    assert.equal(free.statusCode, 200)
    assert.equal(await countSpans(db, id), 0)
    await app.close()
  })

  it('two janitor processes against one database never delete concurrently', async () => {
    const { db } = testDb
    const id = await project(db, 'two-processes', { enabled: true, retentionDays: 1 })
    await seedSpans(db, id, 2_000, new Date(Date.now() - 3 * dayMs))
    const janitors = await Promise.all([1, 2].map(() => startJanitor(testDb.url, { CLEANUP_BATCH_SIZE: '100' })))
    children.push(...janitors.map((janitor) => janitor.child))
    await Promise.all(janitors.map(waitUntilHealthy))
    for (const janitor of janitors) {
      // pino level 40 = warn
      assert.match(janitor.output(), /"level":40[^\n]*CRON_API_KEY is not set/)
    }

    await slowDownDeletes(db, 0.05) // 20 batches: at least a second
    try {
      const responses = await Promise.all(
        janitors.map(async (janitor) => {
          const response = await fetch(`http://127.0.0.1:${janitor.port}${url}`)
          return { status: response.status, body: (await response.json()) as Record<string, unknown> }
        }),
      )
      responses.sort((a, b) => a.status - b.status)
      assert.deepEqual(responses.map((r) => r.status), [200, 409])
      assert.equal(responses[0]?.body.deletedSpans, 2_000)
      assert.deepEqual(responses[1]?.body, { message: 'Cleanup already running' })
      assert.equal(await countSpans(db, id), 0)
    } finally {
      await removeSlowDeletes(db)
    }
  })

  it('a janitor refuses to start on a database that is behind', async () => {
    const { DATABASE_URL: adminUrl } = testEnvironment()
    const name = `tracewell_behind_${randomBytes(6).toString('hex')}`
    const admin = createDb({ databaseUrl: adminUrl, poolSize: 1 })
    await sql.raw(`create database "${name}"`).execute(admin)
    try {
      const behindUrl = new URL(adminUrl)
      behindUrl.pathname = `/${name}`
      const janitor = await startJanitor(behindUrl.toString())
      children.push(janitor.child)
      const [code] = await once(janitor.child, 'exit')
      assert.equal(code, 1)
      assert.match(janitor.output(), /^janitor cannot start: the database is behind: \d+ migration\(s\) not applied .*run `npm run migrate`\n$/)
    } finally {
      await sql.raw(`drop database if exists "${name}" with (force)`).execute(admin)
      await admin.destroy()
    }
  })
})
