import assert from 'node:assert/strict'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { repoRoot } from './manifest-helpers.ts'

// The image runs the bundles of `npm run build:services`, not the sources. They are built and run
// here, without Docker, so that a bundle that cannot start (a path that moved with import.meta.url,
// a package resolved from the wrong node_modules) fails every CI run, not only where a Docker
// daemon is at hand: the all-in-one bundle on an embedded database serves the console, takes a
// trace, prices it with the price table, and gives it back; show-keys and migrate run, and the
// writer's summariser thread loads from its own bundle.

const run = (bundle: string, env: Record<string, string>) =>
  execFileSync(process.execPath, [bundle], { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' })

describe('the service bundles the image runs', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-bundle-'))
  let server: ReturnType<typeof spawn> | undefined
  let output = ''
  let baseUrl = ''

  before(() => {
    execFileSync('npm', ['run', 'build:services'], { cwd: repoRoot, stdio: 'ignore' })
  })
  after(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM')
      await once(server, 'exit')
    }
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("the writer's summariser thread has a bundle of its own, whose imports resolve", () => {
    // Run outside a worker thread it loads every module it imports, then refuses to go on.
    const ran = spawnSync(process.execPath, ['apps/writer/dist/summariser.thread.mjs'], { cwd: repoRoot, encoding: 'utf8' })
    assert.equal(ran.status, 1)
    assert.match(ran.stderr, /Error: summariser\.thread\.ts runs as a worker thread/)
  })

  it('migrate.mjs migrates an embedded database', () => {
    assert.match(run('apps/migrate/dist/migrate.mjs', { DATA_DIR: join(dataDir, 'migrated') }), /applied/)
  })

  it('the all-in-one bundle starts, serves the console, and stores, prices and returns a trace', async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000)
    server = spawn(process.execPath, ['apps/all-in-one/dist/server.mjs'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, PORT: String(port), GRPC_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    server.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    server.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    baseUrl = `http://127.0.0.1:${port}`
    // Up to 90 s: a first start creates and migrates the embedded database, which took over 30 s
    // while CI built the image beside it.
    for (let attempt = 0; attempt < 450; attempt++) {
      if ((await fetch(`${baseUrl}/readyz`).catch(() => undefined))?.ok) break
      assert.equal(server.exitCode, null, output)
      await sleep(200)
    }
    // The keys are printed once the server listens; the pipe may bring them after /readyz answers.
    let projectKey: string | undefined
    for (let attempt = 0; attempt < 150 && projectKey === undefined; attempt++) {
      projectKey = /Project API key:\s+(\S+)/.exec(output)?.[1]
      if (projectKey === undefined) await sleep(100)
    }
    assert.ok(projectKey, output)

    const page = await fetch(`${baseUrl}/`)
    assert.equal(page.status, 200)
    assert.match(await page.text(), /<div id="root">/)

    const traceId = '5b8efff798038103d269b633813fc60c'
    const attributes = [
      { key: 'gen_ai.provider.name', value: { stringValue: 'openai' } },
      { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o-mini' } },
      { key: 'gen_ai.usage.input_tokens', value: { intValue: '1000' } },
      { key: 'gen_ai.usage.output_tokens', value: { intValue: '100' } },
    ]
    const span = { traceId, spanId: 'eee19b7ec3c1b174', name: 'chat gpt-4o-mini', startTimeUnixNano: '1795316906845000000', endTimeUnixNano: '1795316907845000000', attributes }
    const sent = await fetch(`${baseUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': projectKey },
      body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }),
    })
    assert.equal(sent.status, 200, await sent.text())
    const trace = await fetch(`${baseUrl}/api/traces/${traceId}`, { headers: { 'x-api-key': projectKey } })
    assert.equal(trace.status, 200)
    const [stored] = ((await trace.json()) as { spans: Array<{ llmModel: string; totalCostUsd: number | null; costSource: string | null }> }).spans
    assert.equal(stored?.llmModel, 'gpt-4o-mini')
    // gpt-4o-mini at $0.15 per million input and $0.60 per million output tokens.
    assert.deepEqual([stored?.totalCostUsd, stored?.costSource], [0.00021, 'price_table'])
  })

  it('show-keys.mjs shows the first start’s keys again', () => {
    assert.match(run('apps/all-in-one/dist/show-keys.mjs', { DATA_DIR: dataDir, PORT: '3999', HOST: '127.0.0.1' }), /Project API key:\s+tw_proj_/)
  })
})
