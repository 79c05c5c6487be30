import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect, createServer, type Server } from 'node:net'
import { after, describe, it } from 'node:test'
import { testEnvironment } from '@tracewell/config'
import { createTestDatabase } from '@tracewell/db/testing'
import { freePort, repoRoot } from '../src/processes.ts'

// Every entry point, started for real against a Postgres or Redis that is not there: one JSON
// line naming host:port and the cause, bounded retries, one JSON line more, a non-zero exit.

const RETRY_SECONDS = 2
// Loading the TypeScript sources of a service takes a few seconds on a busy machine.
const START_ALLOWANCE_MS = 45_000

interface Exited {
  code: number | null
  lines: string[]
  ms: number
}

/** Runs `entry` with only `env` and collects every line it prints, until it exits. */
async function run(entry: string, env: Record<string, string>, whilePrinting?: (line: string) => void): Promise<Exited> {
  const started = Date.now()
  const child = spawn(process.execPath, [entry], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: String(await freePort()), GRPC_PORT: '0', STARTUP_RETRY_SECONDS: String(RETRY_SECONDS), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const collect = (chunk: Buffer) => {
    output += chunk.toString()
    for (const line of chunk.toString().split('\n')) if (line !== '') whilePrinting?.(line)
  }
  child.stdout.on('data', collect)
  child.stderr.on('data', collect)
  const timer = setTimeout(() => child.kill('SIGKILL'), RETRY_SECONDS * 1000 + START_ALLOWANCE_MS)
  const [code] = (await once(child, 'exit')) as [number | null]
  clearTimeout(timer)
  return { code, lines: output.split('\n').filter((line) => line !== ''), ms: Date.now() - started }
}

function assertGaveUp(result: Exited, dependency: string, address: string, what: string): void {
  assert.equal(result.code, 1, `${what} exits 1:\n${result.lines.join('\n')}`)
  assert.ok(result.ms < RETRY_SECONDS * 1000 + START_ALLOWANCE_MS, `${what} took ${result.ms} ms`)
  // npm start says first, in words, what it opens (its first start can take a minute); every
  // other line, and every line of the services, is a JSON log record.
  const lines = what.includes('all-in-one') ? result.lines.filter((line) => !line.startsWith('Tracewell is starting on port ')) : result.lines
  if (what.includes('all-in-one')) assert.equal(result.lines.length - lines.length, 1, `${what} says what it opens:\n${result.lines.join('\n')}`)
  const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  assert.deepEqual(
    records.map((record) => [record.level, record.dependency, record.address, record.cause]),
    [
      [40, dependency, address, `connect ECONNREFUSED ${address}`],
      [60, dependency, address, `connect ECONNREFUSED ${address}`],
    ],
    what,
  )
  const name = dependency === 'postgres' ? 'Postgres' : 'Redis'
  assert.equal(records[0]?.msg, `${name} at ${address} is unreachable (connect ECONNREFUSED ${address}); retrying for up to ${RETRY_SECONDS} s`)
  assert.equal(records[1]?.msg, `${name} at ${address} is still unreachable after ${RETRY_SECONDS} s (connect ECONNREFUSED ${address}); exiting`)
}

const { DATABASE_URL: adminUrl, REDIS_URL } = testEnvironment()

describe('start-up with Postgres or Redis unreachable', () => {
  const servers: Server[] = []
  after(() => {
    for (const server of servers) server.close()
  })

  it('every service and npm run migrate: two JSON lines, then exit 1 within the retry time', async () => {
    const closedPort = await freePort()
    const address = `127.0.0.1:${closedPort}`
    const databaseUrl = `postgres://postgres@${address}/tracewell`
    const entries: Array<[string, Record<string, string>]> = [
      ['apps/ingest/src/server.ts', { DATABASE_URL: databaseUrl, REDIS_URL }],
      ['apps/writer/src/server.ts', { DATABASE_URL: databaseUrl, REDIS_URL }],
      ['apps/control-plane/src/server.ts', { DATABASE_URL: databaseUrl }],
      ['apps/janitor/src/server.ts', { DATABASE_URL: databaseUrl }],
      ['apps/all-in-one/src/server.ts', { DATABASE_URL: databaseUrl }],
      ['apps/migrate/src/migrate.ts', { DATABASE_URL: databaseUrl }],
    ]
    const results = await Promise.all(entries.map(([entry, env]) => run(entry, env)))
    results.forEach((result, index) => assertGaveUp(result, 'postgres', address, (entries[index] as [string, unknown])[0]))
  })

  it('ingest, writer and npm start with Redis unreachable', async () => {
    const database = await createTestDatabase()
    try {
      const address = `127.0.0.1:${await freePort()}`
      const [ingest, writer, allInOne] = await Promise.all([
        run('apps/ingest/src/server.ts', { DATABASE_URL: database.url, REDIS_URL: `redis://${address}` }),
        run('apps/writer/src/server.ts', { DATABASE_URL: database.url, REDIS_URL: `redis://${address}` }),
        run('apps/all-in-one/src/server.ts', { DATABASE_URL: database.url, REDIS_URL: `redis://${address}` }),
      ])
      assertGaveUp(ingest, 'redis', address, 'ingest')
      assertGaveUp(writer, 'redis', address, 'writer')
      assertGaveUp(allInOne, 'redis', address, 'all-in-one')
    } finally {
      await database.drop()
    }
  })

  it('starts once Postgres answers within the retry time', async () => {
    const database = await createTestDatabase()
    try {
      // Postgres "comes up" when a TCP forwarder to the real one starts listening on the port.
      const port = await freePort()
      const real = new URL(adminUrl)
      const forwarder = createServer((socket) => {
        const upstream = connect(Number(real.port || 5432), real.hostname)
        socket.pipe(upstream).pipe(socket)
        socket.on('error', () => upstream.destroy())
        upstream.on('error', () => socket.destroy())
      })
      servers.push(forwarder)
      const url = new URL(database.url)
      url.host = `127.0.0.1:${port}`
      let listening = false
      const result = await run('apps/control-plane/src/server.ts', { DATABASE_URL: url.toString(), LOG_LEVEL: 'info', STARTUP_RETRY_SECONDS: '30' }, (line) => {
        if (!listening && line.includes('is unreachable')) {
          listening = true
          forwarder.listen(port, '127.0.0.1')
        }
        // Once it serves, it has started: stop it.
        if (line.includes('Server listening')) process.kill(Number((JSON.parse(line) as { pid: number }).pid), 'SIGTERM')
      })
      const records = result.lines.map((line) => JSON.parse(line) as { level: number; msg: string })
      assert.equal(records[0]?.msg, `Postgres at 127.0.0.1:${port} is unreachable (connect ECONNREFUSED 127.0.0.1:${port}); retrying for up to 30 s`)
      assert.equal(records[1]?.msg, `Postgres at 127.0.0.1:${port} answers`)
      assert.ok(records.some((record) => record.msg.startsWith('Server listening')), result.lines.join('\n'))
      assert.equal(result.code, 0)
    } finally {
      await database.drop()
    }
  })

  it('refuses a CRON_API_KEY shorter than 32 characters at start', async () => {
    const result = await run('apps/janitor/src/server.ts', { DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/x`, CRON_API_KEY: 'too-short' })
    assert.equal(result.code, 78)
    assert.equal(result.lines.length, 1)
    assert.match(result.lines[0] as string, /^Configuration error: CRON_API_KEY is invalid \(.+\): secret expected in the cron-api-key header \(at least 32 printable characters, no spaces\); unset leaves cleanup open$/)
  })
})
