// The image as an operator runs it: built from docker/Dockerfile on the local base image, then the
// migration and the five services as containers against the real Postgres and Redis of the test
// environment (host networking, a fresh database created and dropped here, a queue prefix of its
// own). A trace goes in through ingest and comes back through the control plane; the janitor
// answers its health checks and a cleanup call.
//
// Where Docker is not installed (no docker command: most laptops running the unit tests, a CI
// machine without it; .ci/run starts the daemon where the command exists), every test skips at
// once and says why. Where it is installed, the image must build and start:
// a daemon that does not answer or a missing base image fails the tests, saying what to do (the
// image once crashed at start for months while these tests skipped). Every docker command has a
// time limit, so nothing here hangs.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it, type TestContext } from 'node:test'
import { testEnvironment } from '@tracewell/config'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { dockerDir, migrate, parseDockerfile, repoRoot, services } from './manifest-helpers.ts'
import { freePort } from '@tracewell/test-support'

const minute = 60_000
const baseImage = parseDockerfile(readFileSync(join(dockerDir, 'Dockerfile'), 'utf8')).args.BASE_IMAGE!
const runId = `${process.pid}-${randomBytes(3).toString('hex')}`
const image = `tracewell/tracewell:test-${runId}`
const containerName = (service: string): string => `tracewell-test-${runId}-${service}`

type Result = { code: number | null; stdout: string; stderr: string; timedOut: boolean }

/** Runs a command to its end, or kills it when the time is up; never throws for a failing command. */
function run(command: string, args: string[], timeoutMs: number): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, timeoutMs)
    child.once('error', (error) => {
      clearTimeout(timer)
      resolve({ code: null, stdout, stderr: error.message, timedOut })
    })
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, timedOut })
    })
  })
}

const docker = (args: string[], timeoutMs = minute): Promise<Result> => run('docker', args, timeoutMs)

async function dockerOrThrow(args: string[], timeoutMs = minute): Promise<string> {
  const result = await docker(args, timeoutMs)
  if (result.code !== 0) throw new Error(`docker ${args.join(' ')}: ${result.timedOut ? `no answer within ${timeoutMs} ms` : `exit ${result.code}`}\n${result.stderr}${result.stdout}`)
  return result.stdout.trim()
}

/** Why the tests skip (Docker is not installed), or undefined when they run. */
async function whyNotInstalled(): Promise<string | undefined> {
  const version = await docker(['version', '--format', '{{.Client.Version}}'], 15_000)
  if (version.code === null && !version.timedOut) return `Docker is not installed: the docker command is not available (${version.stderr})`
  return undefined
}

/** Throws, saying what to do, when Docker is installed but cannot build the image here. */
async function assertDockerCanBuild(): Promise<void> {
  const version = await docker(['version', '--format', '{{.Server.Version}}'], 15_000)
  if (version.timedOut) throw new Error('Docker is installed but its daemon did not answer `docker version` within 15 s: start dockerd')
  if (version.code !== 0) throw new Error(`Docker is installed but its daemon does not answer (start dockerd): ${version.stderr.trim().split('\n')[0]}`)
  const base = await docker(['image', 'inspect', '--format', '{{.Id}}', baseImage], 15_000)
  if (base.code !== 0) throw new Error(`no base image ${baseImage}: build it once with sudo docker/build-base-image.sh (docs/deployment.md)`)
}

/** Polls until `probe` returns a value (not undefined), or throws when the time is up. */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

async function callJson<T>(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    signal: AbortSignal.timeout(30_000),
  })
  const text = await response.text()
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T }
}

/** As compose.yml runs them: read-only root, /tmp in memory, no capabilities. */
const hardening = ['--read-only', '--tmpfs', '/tmp', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges']
const envArgs = (env: Record<string, string>): string[] => Object.entries(env).flatMap(([name, value]) => ['--env', `${name}=${value}`])

describe('the image, built on the local base and run against real Postgres and Redis', { timeout: 30 * minute }, () => {
  let unavailable: string | undefined
  let database: TestDatabase | undefined
  const started: string[] = []
  const urls: Record<string, string> = {}
  const adminKey = `admin-${randomUUID()}`
  const cronKey = `cron-${randomUUID()}`
  let buildMs = 0

  before(async () => {
    unavailable = await whyNotInstalled()
    if (unavailable) return
    await assertDockerCanBuild()
    const startedAt = Date.now()
    // The builder is whichever this docker defaults to (DOCKER_BUILDKIT chooses); both must work.
    await dockerOrThrow(['build', '--file', join(dockerDir, 'Dockerfile'), '--tag', image, repoRoot], 20 * minute)
    buildMs = Date.now() - startedAt
    database = await createTestDatabase({ migrated: false })
  }, { timeout: 25 * minute })

  after(async () => {
    for (const name of started) await docker(['rm', '--force', '--volumes', name])
    // --no-prune keeps the parent layers: the next build reuses them as its cache.
    if (!unavailable) await docker(['image', 'rm', '--no-prune', image])
    await database?.drop()
  }, { timeout: 5 * minute })

  const skipUnlessRunnable = (t: TestContext): boolean => {
    if (unavailable) t.skip(unavailable)
    return unavailable !== undefined
  }

  async function logsOf(name: string): Promise<string> {
    const result = await docker(['logs', '--tail', '50', name])
    return `${result.stdout}${result.stderr}`
  }

  it('builds, with Node.js 24 from the base, running as uid 1000', async (t) => {
    if (skipUnlessRunnable(t)) return
    t.diagnostic(`built ${image} in ${(buildMs / 1000).toFixed(0)} s`)
    const version = await dockerOrThrow(['run', '--rm', '--entrypoint', 'node', image, '--version'])
    assert.match(version, /^v24\./)
    assert.equal(await dockerOrThrow(['run', '--rm', '--entrypoint', 'id', image, '-u']), '1000')
    const size = Number(await dockerOrThrow(['image', 'inspect', '--format', '{{.Size}}', image]))
    t.diagnostic(`image size ${(size / 1e6).toFixed(0)} MB`)
  })

  it('migrates an empty database', async (t) => {
    if (skipUnlessRunnable(t)) return
    const name = containerName('migrate')
    started.push(name)
    const output = await dockerOrThrow(['run', '--name', name, '--network', 'host', ...hardening, ...envArgs({ DATABASE_URL: database!.url }), image, migrate.entry], 5 * minute)
    assert.match(output, /: applied \S/)
  })

  it('starts ingest, writer, control plane, janitor and evaluator, each ready on /readyz', async (t) => {
    if (skipUnlessRunnable(t)) return
    const { REDIS_URL } = testEnvironment()
    const shared = { DATABASE_URL: database!.url, LOG_LEVEL: 'warn', HOST: '127.0.0.1' }
    const queue = { REDIS_URL, QUEUE_PREFIX: `docker-test-${runId}` }
    const own: Record<string, Record<string, string>> = {
      ingest: { ...queue, KEY_CACHE_TTL_MS: '500', GRPC_PORT: '0' },
      writer: queue,
      'control-plane': { ADMIN_API_KEY: adminKey, SESSION_SECRET: randomBytes(32).toString('hex') },
      janitor: { CRON_API_KEY: cronKey },
      evaluator: { ...queue, LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex') },
    }
    for (const [service, spec] of Object.entries(services)) {
      const port = await freePort()
      const name = containerName(service)
      started.push(name)
      await dockerOrThrow(['run', '--detach', '--name', name, '--network', 'host', ...hardening, ...envArgs({ ...shared, ...own[service], PORT: String(port) }), image, ...(spec.nodeFlags ?? []), spec.entry])
      urls[service] = `http://127.0.0.1:${port}`
    }
    await Promise.all(
      Object.keys(services).map(async (service) => {
        try {
          await eventually(async () => ((await fetch(`${urls[service]}/readyz`, { signal: AbortSignal.timeout(5_000) })).ok ? true : undefined), 2 * minute, `${service} /readyz`)
        } catch (error) {
          throw new Error(`${(error as Error).message}\n${await logsOf(containerName(service))}`, { cause: error })
        }
      }),
    )
  })

  it('stores a trace sent to ingest and serves it through the control plane, and the console', async (t) => {
    if (skipUnlessRunnable(t)) return
    const controlPlane = urls['control-plane']!
    const team = await callJson<{ apiKey: string }>(`${controlPlane}/api/teams`, { method: 'POST', headers: { 'x-admin-key': adminKey }, body: { name: 'docker test' } })
    assert.equal(team.status, 201)
    const project = await callJson<{ id: string }>(`${controlPlane}/api/projects`, { method: 'POST', headers: { 'x-api-key': team.body.apiKey }, body: { name: 'docker test' } })
    assert.equal(project.status, 201)
    const key = await callJson<{ apiKey: string }>(`${controlPlane}/api/api-key?project_id=${project.body.id}`, { method: 'POST', headers: { 'x-api-key': team.body.apiKey } })
    assert.equal(key.status, 200)

    const traceId = randomBytes(16).toString('hex')
    const now = BigInt(Date.now()) * 1_000_000n
    const body = {
      resourceSpans: [{
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'docker-test' } }] },
        scopeSpans: [{
          scope: { name: 'docker-test' },
          spans: [{
            traceId,
            spanId: randomBytes(8).toString('hex'),
            name: 'openai.chat',
            kind: 3,
            startTimeUnixNano: String(now - 1_000_000_000n),
            endTimeUnixNano: String(now),
            attributes: [{ key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } }],
          }],
        }],
      }],
    }
    const accepted = await callJson(`${urls.ingest}/v1/traces`, { method: 'POST', headers: { 'x-api-key': key.body.apiKey }, body })
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body))

    type Stored = { spans: Array<{ name: string; serviceName: string | null; llmModel: string | null }> }
    const stored = await eventually(async () => {
      const response = await callJson<Stored>(`${controlPlane}/api/traces/${traceId}`, { headers: { 'x-api-key': key.body.apiKey } })
      return response.status === 200 && response.body.spans.length === 1 ? response.body.spans[0] : undefined
    }, minute, `trace ${traceId} through the writer`).catch(async (error: Error) => {
      throw new Error(`${error.message}\n--- writer\n${await logsOf(containerName('writer'))}`, { cause: error })
    })
    assert.equal(stored.name, 'openai.chat')
    assert.equal(stored.serviceName, 'docker-test')
    assert.equal(stored.llmModel, 'gpt-4o')

    // A body over 256 KiB is decoded by the worker threads' own bundle (DECODE_THREADS), which
    // only this path loads.
    const manySpans = Array.from({ length: 3_000 }, (_, i) => ({ ...body.resourceSpans[0]!.scopeSpans[0]!.spans[0]!, spanId: (i + 1).toString(16).padStart(16, '0') }))
    const large = { resourceSpans: [{ ...body.resourceSpans[0]!, scopeSpans: [{ ...body.resourceSpans[0]!.scopeSpans[0]!, spans: manySpans }] }] }
    assert.ok(JSON.stringify(large).length > 256 * 1024)
    const largeAccepted = await callJson(`${urls.ingest}/v1/traces`, { method: 'POST', headers: { 'x-api-key': key.body.apiKey }, body: large })
    assert.equal(largeAccepted.status, 200, JSON.stringify(largeAccepted.body))
    const ingestMetrics = await (await fetch(`${urls.ingest}/metrics`, { signal: AbortSignal.timeout(10_000) })).text()
    assert.match(ingestMetrics, /^tracewell_ingest_worker_decodes_total 1$/m)

    // The console the image built in its own stage, served by the control plane.
    const page = await fetch(`${controlPlane}/`, { signal: AbortSignal.timeout(10_000) })
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type') ?? '', /text\/html/)
    assert.match(await page.text(), /\/assets\/[^"]+\.js/)
    // The Ingress sends every path but the trace intake here: the janitor's cleanup is not one.
    const cleanup = await fetch(`${controlPlane}/api/cron/cleanup-traces`, { headers: { 'cron-api-key': cronKey }, signal: AbortSignal.timeout(10_000) })
    assert.equal(cleanup.status, 404)
  })

  it('starts the all-in-one, the image’s default command, on its embedded database', async (t) => {
    if (skipUnlessRunnable(t)) return
    const port = await freePort()
    const name = containerName('all-in-one')
    started.push(name)
    // No command: the image's own (CMD apps/all-in-one/dist/server.mjs), as `docker run` with no
    // arguments starts it. DATA_DIR on a tmpfs, since the root file system is read-only.
    await dockerOrThrow(['run', '--detach', '--name', name, '--network', 'host', ...hardening, '--tmpfs', '/data:uid=1000', ...envArgs({ PORT: String(port), GRPC_PORT: '0', HOST: '127.0.0.1', DATA_DIR: '/data', LOG_LEVEL: 'warn' }), image])
    const url = `http://127.0.0.1:${port}`
    try {
      await eventually(async () => ((await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) })).ok ? true : undefined), 3 * minute, 'all-in-one /readyz')
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${await logsOf(name)}`, { cause: error })
    }
    const keys = await dockerOrThrow(['exec', name, 'node', 'apps/all-in-one/dist/show-keys.mjs'])
    const projectKey = /Project API key:\s+(\S+)/.exec(keys)?.[1]
    assert.ok(projectKey, keys)
    const traces = await callJson<{ traces: unknown[] }>(`${url}/api/traces`, { headers: { 'x-api-key': projectKey } })
    assert.equal(traces.status, 200)
  })

  it("answers the janitor's health checks and runs a cleanup", async (t) => {
    if (skipUnlessRunnable(t)) return
    for (const path of ['/healthz', '/readyz']) {
      const response = await fetch(`${urls.janitor}${path}`, { signal: AbortSignal.timeout(10_000) })
      assert.equal(response.status, 200, `janitor ${path}`)
    }
    const cleanup = await callJson<{ success: boolean }>(`${urls.janitor}/api/cron/cleanup-traces`, { headers: { 'cron-api-key': cronKey } })
    assert.equal(cleanup.status, 200)
    assert.equal(cleanup.body.success, true)
  })
})
