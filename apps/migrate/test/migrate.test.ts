import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { testEnvironment } from '@tracewell/config'
import { QueueNames } from '@tracewell/queue'
import { Queue, Worker } from 'bullmq'
import { migrateToLatest, sql } from '@tracewell/db'
import { createTestDatabase, migrateToBefore, type TestDatabase } from '@tracewell/db/testing'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'

// `npm run migrate` and `migrate.mjs --wait`. The Job's run pauses the writers' queue around a
// migration that fills new columns from stored spans; every Kubernetes service's init container
// applies nothing, waits while the Job applies what its version needs, and lets it start then.

const migrateBin = fileURLToPath(new URL('../src/migrate.ts', import.meta.url))

const { REDIS_URL } = testEnvironment()

function startMigrate(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [migrateBin, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  return { child, output: () => output, exited: once(child, 'exit') as Promise<[number | null]> }
}

const startWaiting = (databaseUrl: string, retrySeconds: number) => startMigrate(['--wait'], { DATABASE_URL: databaseUrl, STARTUP_RETRY_SECONDS: String(retrySeconds) })

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

describe('npm run migrate with the writers\' queue in its settings', { timeout: 90_000 }, () => {
  const backfill = '2026-11-26T0900-summary-deltas'
  let database: TestDatabase
  let prefix: string
  let queue: Queue
  before(async () => {
    database = await createTestDatabase({ migrated: false })
    // A database of the release before the backfill, with spans stored.
    await migrateToBefore(database.db, backfill)
    prefix = testQueuePrefix('migrate')
    queue = new Queue(QueueNames.spanBatches, { connection: { url: REDIS_URL }, prefix })
  })
  after(async () => {
    await queue?.obliterate({ force: true }).catch(() => {})
    await queue?.close()
    await database?.drop()
  })

  it('pauses the writers around a backfill: the job in hand finishes first, the next waits for the migration', async () => {
    const started = new Map<string, number>()
    const finished = new Map<string, number>()
    // The job in hand is still being stored when the migration pauses the queue.
    let migrationPausing: () => void = () => {}
    const pausing = new Promise<void>((resolve) => (migrationPausing = resolve))
    const writer = new Worker(
      QueueNames.spanBatches,
      async (job) => {
        started.set(job.name, Date.now())
        if (job.name === 'in-hand') await pausing.then(() => sleep(1_000))
        finished.set(job.name, Date.now())
      },
      { connection: { url: REDIS_URL, maxRetriesPerRequest: null }, prefix },
    )
    try {
      await queue.add('in-hand', {})
      for (let attempt = 0; attempt < 100 && !started.has('in-hand'); attempt++) await sleep(50)
      assert.ok(started.has('in-hand'), 'the writer took the first job')
      const migrating = startMigrate([], { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: prefix })
      for (let attempt = 0; attempt < 400 && !migrating.output().includes('pausing the writers'); attempt++) await sleep(50)
      await queue.add('after', {})
      migrationPausing()
      const [code] = await migrating.exited
      assert.equal(code, 0, migrating.output())
      assert.match(migrating.output(), new RegExp(`pausing the writers for ${backfill}`))
      assert.match(migrating.output(), /waiting for the writers to finish 1 job\(s\)/)
      assert.match(migrating.output(), /resumed the writers/)
      for (let attempt = 0; attempt < 100 && !finished.has('after'); attempt++) await sleep(50)
      const { rows } = await sql<{ timestamp: string }>`select timestamp from kysely_migration where name = ${backfill}`.execute(database.db)
      const migratedAt = new Date(rows[0]?.timestamp ?? Number.NaN).getTime()
      assert.ok((finished.get('in-hand') as number) <= migratedAt, 'the job in hand was stored before the migration ran')
      assert.ok((started.get('after') as number) >= migratedAt, 'the next job waited for the migration')
      assert.equal(await queue.isPaused(), false)
    } finally {
      await writer.close()
    }
  })

  it('resumes the writers a killed run left paused, and never a pause made by hand', async () => {
    // A run killed (SIGKILL) while it held the writers paused.
    const killed = spawn(
      process.execPath,
      ['--input-type=module', '-e', `import { pauseWriters } from '@tracewell/queue'; await pauseWriters({ redis: { url: ${JSON.stringify(REDIS_URL)} }, prefix: ${JSON.stringify(prefix)}, shards: 1 }, 10_000); console.log('paused')`],
      { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: ['ignore', 'pipe', 'inherit'] },
    )
    await once(killed.stdout, 'data')
    killed.kill('SIGKILL')
    await once(killed, 'exit')
    assert.equal(await queue.isPaused(), true)
    const run = startMigrate([], { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: prefix })
    assert.equal((await run.exited)[0], 0, run.output())
    assert.match(run.output(), /resumed the writers an earlier run left paused/)
    assert.equal(await queue.isPaused(), false)

    await queue.pause()
    const again = startMigrate([], { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: prefix })
    assert.equal((await again.exited)[0], 0, again.output())
    assert.doesNotMatch(again.output(), /resumed/)
    assert.equal(await queue.isPaused(), true, "an operator's pause stays")
  })
})
