import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'

// `npm start` as a newcomer runs it: it says what it is doing from its first moment (a first start
// could be silent for most of a minute), and `npm run keys`, run later in another shell without
// PORT, names the port the server really listens on.

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url))

describe('a first start', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-first-start-'))
  let database: TestDatabase
  const lines: string[] = []
  let server: ReturnType<typeof spawn>
  let port = 0

  before(async () => {
    // An empty database: the start applies every migration, as the embedded one's first start does.
    database = await createTestDatabase({ migrated: false })
    server = spawn(process.execPath, ['apps/all-in-one/src/server.ts'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, DATABASE_URL: database.url, PORT: '0', GRPC_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const reader = createInterface({ input: server.stdout as NodeJS.ReadableStream })
    for await (const line of reader) {
      lines.push(line)
      const listening = /"msg":"Tracewell listening on http:\/\/127\.0\.0\.1:(\d+)"/.exec(line)
      if (listening) {
        port = Number(listening[1])
        break
      }
    }
  })
  after(async () => {
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
    await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('says what it is doing before the server listens', () => {
    assert.ok(port > 0, `listened (output: ${lines.join('\n')})`)
    assert.equal(lines[0], 'Tracewell is starting on port 0: opening the Postgres at DATABASE_URL…')
    const messages = lines.filter((line) => line.startsWith('{')).map((line) => (JSON.parse(line) as { msg: string }).msg)
    assert.equal(messages[0], 'checking the database schema')
    assert.ok(messages.includes('applying database migration 2026-11-22T0300-initial-schema'), messages.join('\n'))
    assert.ok(messages.indexOf('database schema up to date') < messages.indexOf(`Tracewell listening on http://127.0.0.1:${port}`))
  })

  it('npm run keys names the port the server listens on, wherever it is run', () => {
    const keys = spawnSync(process.execPath, ['apps/all-in-one/src/bin/show-keys.ts'], { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir }, encoding: 'utf8' })
    assert.equal(keys.status, 0, keys.stderr)
    assert.match(keys.stdout, new RegExp(`Base URL \\(api_host\\): {3}http://127\\.0\\.0\\.1:${port}\\n`))
    assert.doesNotMatch(keys.stdout, /:3000/)
  })

  it('prints the setup link beside the keys, and npm run keys prints the same one', async () => {
    const printed = lines.map((line) => new RegExp(`^  (http://127\\.0\\.0\\.1:${port}/setup/[A-Za-z0-9_-]{43})$`).exec(line)?.[1]).find((link) => link !== undefined)
    assert.ok(printed, `a setup link was printed (output: ${lines.join('\n')})`)
    const keys = spawnSync(process.execPath, ['apps/all-in-one/src/bin/show-keys.ts'], { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir }, encoding: 'utf8' })
    assert.ok(keys.stdout.includes(`\n  ${printed}\n`), keys.stdout)
    const page = await fetch(printed.replace('/setup/', '/api/setup/'))
    assert.deepEqual([page.status, await page.json()], [200, { teamName: 'Default team' }])
  })
})
