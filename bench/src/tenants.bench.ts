// npm run bench:tenants — one project's flood against another's trickle, in one run on this machine.
//
//   one ingest and two writers (`apps/*/src/server.ts` as child processes, fresh database and
//   queue prefix of their own, default settings).
//   project B sends one two-span trace every 200 ms; for each we measure its HTTP latency and its
//   time to stored: from the 200 to the moment both spans are rows in `spans` (polled every 20 ms,
//   so a figure is at most 20 ms late).
//   alone       B by itself, for `phaseSeconds`.
//   flood       project A floods ingest at its full rate (autocannon, 32 connections, 100-span
//               traces) from `floodLeadSeconds` before B starts until B is done; then the queue
//               drains before the next round.
// Rounds alternate alone and flood (`rounds` of each, TENANT_ROUNDS, default 2), each flood
// followed by a drain, and the ratios are of the pooled samples. Where B's jobs spent their time
// (waiting for a writer, in the writer) is read from BullMQ's timestamps, and A's stored rate from
// Postgres: what the writers gave the flood while keeping B fresh.
//
// Targets (issue 31, docs/benchmarks.md): B's time-to-stored p99 during the flood ≤ 2 s, and B gets
// no 429, with the default settings. Runs ~2.5 minutes and cleans up after itself (children,
// database, queue).
import { type ChildProcess } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import { displayPrefix, generateApiKey, hashApiKey } from '@tracewell/auth'
import { testEnvironment } from '@tracewell/config'
import { countSpans, createProject, createTeam, insertApiKey, sql, type Db } from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import { QueueNames } from '@tracewell/queue'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { freePort, servicesRunAs, startService, stopChild } from './child-processes.ts'
import { discardQueue } from './discard-queue.ts'
import { bodyFactory } from './llm-spans.ts'
import { percentile } from './statistics.ts'

const rounds = Number(process.env.TENANT_ROUNDS ?? 2)
const phaseSeconds = Number(process.env.TENANT_PHASE_SECONDS ?? 15)
const floodLeadSeconds = 3
const trickleEveryMs = 200
const floodConnections = 32
const floodSpansPerTrace = 100
const targets = { floodP99Ms: 2_000, trickle429: 0 }
const out = (line: string) => process.stdout.write(`${line}\n`)

interface Tenant {
  projectId: string
  key: string
}

async function createTenant(db: Db, name: string): Promise<Tenant> {
  const team = await createTeam(db, { name })
  const project = await createProject(db, { teamId: team.id, name })
  const key = generateApiKey('project')
  await insertApiKey(db, { kind: 'project', teamId: team.id, projectId: project.id, keyHash: hashApiKey(key), prefix: displayPrefix(key) })
  return { projectId: project.id, key }
}

/** One two-span trace of B's: its id and body. */
function twoSpanTrace(): { traceId: string; body: string } {
  const traceId = randomBytes(16).toString('hex')
  const span = (i: number) => ({
    traceId,
    spanId: randomBytes(8).toString('hex'),
    name: `checkout step ${i}`,
    kind: 1,
    startTimeUnixNano: `${BigInt(Date.now()) * 1_000_000n}`,
    endTimeUnixNano: `${BigInt(Date.now() + 5) * 1_000_000n}`,
    attributes: [{ key: 'llm.model', value: { stringValue: 'gpt-4o-mini' } }],
  })
  return { traceId, body: JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] }, scopeSpans: [{ spans: [span(0), span(1)] }] }] }) }
}

interface TrickleResult {
  httpMs: number[]
  storedMs: number[]
  refused: number
  /** Traces never stored within the wait. */
  lost: number
}

/**
 * B's trickle for `seconds`: a trace every 200 ms (each request on its own, not waiting for the
 * previous), then waits up to 60 s for the last of them to be stored.
 */
async function trickle(db: Db, url: string, tenant: Tenant, seconds: number): Promise<TrickleResult> {
  const acknowledgedAt = new Map<string, number>()
  const storedMs: number[] = []
  const httpMs: number[] = []
  let refused = 0
  let sending = true
  const poller = (async () => {
    while (sending || acknowledgedAt.size > 0) {
      if (acknowledgedAt.size > 0) {
        const { rows } = await sql<{ trace_id: string }>`
          select trace_id from spans where project_id = ${tenant.projectId} and trace_id = any(${[...acknowledgedAt.keys()]})
          group by trace_id having count(*) = 2`.execute(db)
        const now = performance.now()
        for (const { trace_id: traceId } of rows) {
          storedMs.push(now - (acknowledgedAt.get(traceId) as number))
          acknowledgedAt.delete(traceId)
        }
      }
      if (!sending && acknowledgedAt.size > 0 && performance.now() - Math.min(...acknowledgedAt.values()) > 60_000) break
      await sleep(20)
    }
  })()
  const requests: Array<Promise<void>> = []
  const until = performance.now() + seconds * 1000
  while (performance.now() < until) {
    const { traceId, body } = twoSpanTrace()
    requests.push(
      (async () => {
        const started = performance.now()
        const response = await fetch(`${url}/v1/traces`, { method: 'POST', headers: { 'x-api-key': tenant.key, 'content-type': 'application/json' }, body })
        await response.arrayBuffer()
        const answered = performance.now()
        httpMs.push(answered - started)
        if (response.status === 200) acknowledgedAt.set(traceId, answered)
        else if (response.status === 429) refused++
        else throw new Error(`B's request answered ${response.status}`)
      })(),
    )
    await sleep(trickleEveryMs)
  }
  await Promise.all(requests)
  sending = false
  await poller
  return { httpMs, storedMs, refused, lost: acknowledgedAt.size }
}

/** A's flood until `stop` resolves: autocannon at full speed; its accepted and refused counts. */
function flood(url: string, tenant: Tenant): { stop(): Promise<{ accepted: number; refused: number; seconds: number }> } {
  const body = bodyFactory(floodSpansPerTrace, 'small')
  let resolveFinished: (result: autocannon.Result) => void = () => {}
  const finished = new Promise<autocannon.Result>((resolve) => (resolveFinished = resolve))
  // With a callback autocannon answers its instance, which stop() ends; the callback gets the result.
  const instance = autocannon(
    {
      url: `${url}/v1/traces`,
      connections: floodConnections,
      duration: 3_600,
      requests: [{ method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': tenant.key }, setupRequest: (request) => ({ ...request, body: body() }) }],
    },
    (error, result) => (error ? resolveFinished({ '2xx': 0, non2xx: 0 } as autocannon.Result) : resolveFinished(result)),
  )
  const started = performance.now()
  return {
    async stop() {
      instance.stop()
      const result = await finished
      return { accepted: result['2xx'], refused: result.non2xx, seconds: (performance.now() - started) / 1000 }
    },
  }
}

/**
 * Where B's jobs spent their time since `since` (BullMQ's own timestamps, from the completed jobs
 * it keeps): waiting for a writer to take them, and in the writer until stored.
 */
async function jobTimes(queue: Queue, projectId: string, since: number): Promise<{ waitMs: number[]; runMs: number[] }> {
  const jobs = await queue.getJobs(['completed'], 0, -1)
  const own = jobs.filter((job) => (job.data as { projectId?: string }).projectId === projectId && job.timestamp >= since && job.processedOn && job.finishedOn)
  return { waitMs: own.map((job) => (job.processedOn as number) - job.timestamp), runMs: own.map((job) => (job.finishedOn as number) - (job.processedOn as number)) }
}

async function waitDrained(queue: Queue, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const counts = await queue.getJobCounts('wait', 'prioritized', 'active', 'delayed')
    if (Object.values(counts).every((count) => count === 0)) return
    await sleep(250)
  }
  throw new Error('the queue did not drain within 3 minutes')
}

const ms = (value: number) => `${Math.round(value)} ms`
const seconds = (value: number) => `${(value / 1000).toFixed(2)} s`

interface TenantsResult {
  alone: TrickleResult[]
  flooded: TrickleResult[]
  floods: Array<{ accepted: number; refused: number; seconds: number }>
  jobWait: number[]
  jobRun: number[]
  /** A's spans stored per second by the two writers during the flood phases. */
  aStoredPerSecond: number[]
}

/** `rounds` of B alone, then B during A's flood, with two writers (started here, stopped after). */
async function measure(context: { db: Db; url: string; env: Record<string, string>; queue: Queue; a: Tenant; b: Tenant }): Promise<TenantsResult> {
  const { db, url, queue, a, b } = context
  const writers: ChildProcess[] = []
  const result: TenantsResult = { alone: [], flooded: [], floods: [], jobWait: [], jobRun: [], aStoredPerSecond: [] }
  try {
    for (let i = 0; i < 2; i++) writers.push(await startService('apps/writer/src/server.ts', context.env, await freePort()))
    // Warm-up: every process's first requests and first COPYs are not what is measured.
    await trickle(db, url, b, 2)
    for (let round = 1; round <= rounds; round++) {
      const alone = await trickle(db, url, b, phaseSeconds)
      result.alone.push(alone)
      const a429 = flood(url, a)
      await sleep(floodLeadSeconds * 1000)
      const trickleStarted = Date.now()
      const aBefore = await countSpans(db, a.projectId)
      const flooded = await trickle(db, url, b, phaseSeconds)
      result.aStoredPerSecond.push(((await countSpans(db, a.projectId)) - aBefore) / ((Date.now() - trickleStarted) / 1000))
      result.flooded.push(flooded)
      const floodResult = await a429.stop()
      result.floods.push(floodResult)
      const times = await jobTimes(queue, b.projectId, trickleStarted)
      result.jobWait.push(...times.waitMs)
      result.jobRun.push(...times.runMs)
      out(
        `  round ${round}: B alone p50/p99 ${ms(percentile(alone.storedMs, 50))}/${ms(percentile(alone.storedMs, 99))}, ` +
          `B during A's flood ${ms(percentile(flooded.storedMs, 50))}/${ms(percentile(flooded.storedMs, 99))}; ` +
          `A: ${Math.round((floodResult.accepted * floodSpansPerTrace) / floodResult.seconds)} spans/s accepted, ${Math.round(result.aStoredPerSecond.at(-1) as number)} stored, ${floodResult.refused} requests refused (429)`,
      )
      await waitDrained(queue)
    }
  } finally {
    for (const writer of writers) await stopChild(writer)
  }
  return result
}

/** Prints the figures; answers B's flood p99 and its 429s. */
function report(result: TenantsResult): { floodP99: number; b429: number; lost: number } {
  const pooled = (results: TrickleResult[], key: 'httpMs' | 'storedMs') => results.flatMap((trickled) => trickled[key])
  const storedAlone = pooled(result.alone, 'storedMs')
  const storedFlood = pooled(result.flooded, 'storedMs')
  const httpAlone = pooled(result.alone, 'httpMs')
  const httpFlood = pooled(result.flooded, 'httpMs')
  const floodP99 = percentile(storedFlood, 99)
  out('')
  out(`  B time to stored   alone p50 ${ms(percentile(storedAlone, 50))}  p99 ${ms(percentile(storedAlone, 99))}   (${storedAlone.length} traces)`)
  out(`                     flood p50 ${ms(percentile(storedFlood, 50))}  p99 ${ms(floodP99)}   (${storedFlood.length} traces)`)
  out(`                     ratio p50 ${(percentile(storedFlood, 50) / percentile(storedAlone, 50)).toFixed(2)}×  p99 ${(floodP99 / percentile(storedAlone, 99)).toFixed(2)}×`)
  out(`  B HTTP latency     alone p50 ${ms(percentile(httpAlone, 50))}  p99 ${ms(percentile(httpAlone, 99))};  flood p50 ${ms(percentile(httpFlood, 50))}  p99 ${ms(percentile(httpFlood, 99))}  (p99 ratio ${(percentile(httpFlood, 99) / percentile(httpAlone, 99)).toFixed(2)}×)`)
  out(`  B's jobs (flood)   waited for a writer p50 ${ms(percentile(result.jobWait, 50))}  p99 ${ms(percentile(result.jobWait, 99))};  in the writer p50 ${ms(percentile(result.jobRun, 50))}  p99 ${ms(percentile(result.jobRun, 99))}  (${result.jobWait.length} jobs)`)
  const floodSpans = result.floods.reduce((sum, flooded) => sum + flooded.accepted * floodSpansPerTrace, 0)
  const floodSeconds = result.floods.reduce((sum, flooded) => sum + flooded.seconds, 0)
  const stored = result.aStoredPerSecond.reduce((sum, rate) => sum + rate, 0) / result.aStoredPerSecond.length
  out(`  A's flood          ${Math.round(floodSpans / floodSeconds)} spans/s accepted, ${Math.round(stored)} spans/s stored by the two writers, ${result.floods.reduce((sum, flooded) => sum + flooded.refused, 0)} requests refused (429)`)
  const b429 = [...result.alone, ...result.flooded].reduce((sum, trickled) => sum + trickled.refused, 0)
  const lost = [...result.alone, ...result.flooded].reduce((sum, trickled) => sum + trickled.lost, 0)
  return { floodP99, b429, lost }
}

async function main(): Promise<void> {
  const database = await createTestDatabase()
  const { REDIS_URL } = testEnvironment()
  const prefix = `bench-tenants-${randomUUID()}`
  const queue = new Queue(QueueNames.spanBatches, { connection: { url: REDIS_URL }, prefix })
  const redis = new Redis(REDIS_URL)
  let ingest: ChildProcess | undefined
  try {
    const env = { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: prefix }
    const ingestPort = await freePort()
    ingest = await startService('apps/ingest/src/server.ts', env, ingestPort)
    const url = `http://127.0.0.1:${ingestPort}`
    const a = await createTenant(database.db, 'tenant A (flood)')
    const b = await createTenant(database.db, 'tenant B (trickle)')
    out(`bench:tenants — one ingest, two writers (default settings); ${servicesRunAs()}; B: a two-span trace every ${trickleEveryMs} ms for ${phaseSeconds} s a phase; A: ${floodConnections} connections of ${floodSpansPerTrace}-span traces; ${rounds} rounds`)
    const verdict = report(await measure({ db: database.db, url, env, queue, a, b }))
    out('')
    out(`${verdict.floodP99 <= targets.floodP99Ms ? 'PASS' : 'FAIL'}  B's time-to-stored p99 during A's flood ${seconds(verdict.floodP99)} (target ≤ ${seconds(targets.floodP99Ms)})`)
    out(`${verdict.b429 === targets.trickle429 ? 'PASS' : 'FAIL'}  B refused ${verdict.b429} times (target 0); B's traces not stored within 60 s: ${verdict.lost}`)
  } finally {
    if (ingest) await stopChild(ingest)
    await discardQueue(queue, redis, prefix).catch(() => {})
    await queue.close()
    redis.disconnect()
    await database.drop()
  }
}

await main()
