// The load bench:ingest and bench:writer put on the write path: HTTP requests of the shapes LLM
// applications send (autocannon), the writers' own count of spans stored, and the writer-alone
// drain of a backlog queued while the queue is paused.
import { randomUUID } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import { displayPrefix, generateApiKey, hashApiKey } from '@tracewell/auth'
import { countSpans, createProject, createTeam, insertApiKey, type Db } from '@tracewell/db'
import type { Queue } from 'bullmq'
import { bodyFactory, type SpanSize } from './llm-spans.ts'
import { cpuSeconds, serverCpuSeconds } from './process-stats.ts'
import { median } from './statistics.ts'
import { waitSummarised, watchDatabase, type DatabaseWatch } from './write-path-probes.ts'

export const out = (line: string) => process.stdout.write(`${line}\n`)

export const defaultConnections = 50
const defaultSeconds = 5
// How often a drain asks the writers how many spans they have stored. Every ask is a scrape of the
// writer's /metrics, work taken from the writer being measured: asked too often, it showed in the
// writer's CPU (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
// 100 ms is within 2% of a drain's seconds.
const storedPollMs = 100
// How often a writer-alone drain asks Redis whether the queue is empty.
const drainPollMs = 25

/** A traffic shape: traces of `spansPerTrace` spans, one trace a request. */
export interface Shape {
  label: string
  spansPerTrace: number
  size: SpanSize
  /** Spans queued for a writer-alone round. */
  backlog: number
  connections: number
  writerAloneTarget: number
}

/** The shapes of issue 28: one-span traces (one span a request, 64 connections), ten-span traces, 100-span small and large. */
export function trafficShapes(backlogSpans: number): Shape[] {
  return [
    { label: 'one-span traces', spansPerTrace: 1, size: 'small', backlog: 60_000, connections: 64, writerAloneTarget: 0.35 },
    { label: 'ten-span traces', spansPerTrace: 10, size: 'small', backlog: 150_000, connections: defaultConnections, writerAloneTarget: 0.5 },
    { label: '100-span traces, small spans', spansPerTrace: 100, size: 'small', backlog: backlogSpans, connections: defaultConnections, writerAloneTarget: 0.6 },
    { label: '100-span traces, large spans', spansPerTrace: 100, size: 'large', backlog: backlogSpans, connections: defaultConnections, writerAloneTarget: 0.6 },
  ]
}

/** One-span traces of long prompts, rows Postgres compresses (bench:writer with SHAPES=long-prompt). */
export const longPromptShape: Shape = { label: 'long-prompt one-span traces', spansPerTrace: 1, size: 'long', backlog: 40_000, connections: 64, writerAloneTarget: 0.35 }

export interface Load {
  connections?: number
  url: string
  headers: Record<string, string>
  body: () => string
  duration?: number
  amount?: number
  overallRate?: number
}

export interface Measured {
  requestsPerSecond: number
  ok: number
  rejected: number
  errors: number
  p50: number
  p99: number
}

export async function run(load: Load): Promise<Measured> {
  const result = await autocannon({
    url: load.url,
    connections: load.connections ?? defaultConnections,
    ...(load.amount ? { amount: load.amount } : { duration: load.duration ?? defaultSeconds }),
    ...(load.overallRate ? { overallRate: load.overallRate } : {}),
    requests: [{ method: 'POST', headers: { 'content-type': 'application/json', ...load.headers }, setupRequest: (request) => ({ ...request, body: load.body() }) }],
  })
  return {
    requestsPerSecond: result['2xx'] / result.duration,
    ok: result['2xx'],
    rejected: result.non2xx,
    errors: result.errors + result.timeouts,
    p50: result.latency.p50,
    p99: result.latency.p99,
  }
}

/** The writers' count of spans stored (committed) since they started, from their /metrics. */
export async function spansWritten(writerPorts: readonly number[]): Promise<number> {
  let written = 0
  for (const port of writerPorts) {
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    written += Number(/^tracewell_writer_spans_written_total (\d+)$/m.exec(metrics)?.[1] ?? Number.NaN)
  }
  return written
}

/** Polls the queue until no job waits, runs or is delayed for a retry, or `elapsed()` passes `limitSeconds`. */
async function pollDrained(queue: Queue, elapsed: () => number, limitSeconds: number): Promise<void> {
  while (elapsed() < limitSeconds) {
    const counts = await queue.getJobCounts('wait', 'active', 'prioritized', 'delayed')
    if (Object.values(counts).every((count) => count === 0)) return
    await sleep(drainPollMs)
  }
  throw new Error(`writer alone: the queue was not drained within ${limitSeconds} s`)
}

/** Polls the writer until it has stored `spans` more than `before`, or `elapsed()` passes `limitSeconds`: how many it stored. */
export async function pollStored(writerPorts: readonly number[], before: number, spans: number, elapsed: () => number, limitSeconds: number): Promise<number> {
  let stored = 0
  while (stored < spans && elapsed() < limitSeconds) {
    await sleep(storedPollMs)
    stored = (await spansWritten(writerPorts)) - before
  }
  return stored
}

export async function createTenant(db: Db, name: string): Promise<{ projectId: string; key: string }> {
  const team = await createTeam(db, { name })
  const project = await createProject(db, { teamId: team.id, name })
  const key = generateApiKey('project')
  await insertApiKey(db, { kind: 'project', teamId: team.id, projectId: project.id, keyHash: hashApiKey(key), prefix: displayPrefix(key) })
  return { projectId: project.id, key }
}

/** `rounds` rounds of the ceiling, then the thing measured against it: each round's ratio, and the median. */
export async function alternate<T>(label: string, rounds: number, ceiling: () => Promise<number>, measured: () => Promise<T>, rateOf: (result: T) => number, unit: string): Promise<{ ratio: number; ratios: number[]; ceilings: number[]; results: T[] }> {
  const ceilings: number[] = []
  const results: T[] = []
  const ratios: number[] = []
  for (let round = 1; round <= rounds; round++) {
    ceilings.push(await ceiling())
    results.push(await measured())
    ratios.push(rateOf(results.at(-1) as T) / (ceilings.at(-1) as number))
    out(`  ${label}, round ${round}: ${rateOf(results.at(-1) as T).toFixed(0)} ${unit} / ceiling ${(ceilings.at(-1) as number).toFixed(0)} = ${(ratios.at(-1) as number).toFixed(2)}`)
  }
  return { ratio: median(ratios), ratios, ceilings, results }
}

export interface Drained {
  seconds: number
  /** Seconds until every span was stored (the rest of `seconds`, the summaries catching up). */
  storedSeconds: number
  stored: number
  /** CPU seconds the writer processes spent on the drain. */
  writerCpu: number
  /** CPU seconds Postgres's and Redis's processes spent meanwhile. */
  postgresCpu: number
  redisCpu: number
  /** Jobs the backlog was queued as. */
  jobs: number
  watched: DatabaseWatch
}

/**
 * Where the drains' CPU went, a span, and what `target` of the COPY ceiling allows: the machine's
 * cores over the spans a second the target asks for. When the processes alone spend more than
 * that, no overlap can meet the target on this machine; when they spend less, what is missing is
 * overlap (the cores busy). Beside Postgres's CPU, what the COPY of the same rows cost it: the
 * rest is the summaries' share and the writer's round trips.
 */
export function drainCpuSummary(results: readonly Drained[], copy: { rate: number; postgresMicrosPerRow: readonly number[] }, target: number): string {
  const total = (of: (result: Drained) => number) => results.reduce((sum, result) => sum + of(result), 0)
  const stored = total((result) => result.stored)
  const perSpan = (seconds: number) => `${((seconds / stored) * 1e6).toFixed(0)} µs`
  const [writer, postgres, redis] = [total((result) => result.writerCpu), total((result) => result.postgresCpu), total((result) => result.redisCpu)]
  const all = writer + postgres + redis
  const cores = availableParallelism()
  const allowed = (cores / (target * copy.rate)) * 1e6
  return `CPU a span: writer ${perSpan(writer)}, Postgres ${perSpan(postgres)} (the COPY's ${median(copy.postgresMicrosPerRow).toFixed(0)} µs a row), Redis ${perSpan(redis)}, ${perSpan(all)} in all, ${(all / total((result) => result.seconds)).toFixed(2)} of ${cores} cores busy; ${target} of this COPY allows ${allowed.toFixed(0)} µs`
}

export interface DrainSetup {
  db: Db
  queue: Queue
  traceUrl: string
  writerPids: readonly number[]
}

/**
 * The writer alone: a backlog of the shape queued through ingest while the queue is paused, then
 * drained with ingest idle. The drain ends when every span is stored and every summary includes it.
 */
export async function drainBacklog(setup: DrainSetup, shape: Shape): Promise<Drained> {
  const tenant = await createTenant(setup.db, `bench-writer-alone-${randomUUID()}`)
  await setup.queue.pause()
  const sent = await run({ url: setup.traceUrl, connections: shape.connections, headers: { 'x-api-key': tenant.key }, body: bodyFactory(shape.spansPerTrace, shape.size), amount: shape.backlog / shape.spansPerTrace })
  if (sent.rejected + sent.errors > 0) throw new Error(`writer alone: ${sent.rejected + sent.errors} requests of the backlog refused`)
  // Ingest's group writes still in flight land before the clock starts.
  await sleep(1_000)
  const counts = await setup.queue.getJobCounts('wait', 'prioritized')
  const jobs = Object.values(counts).reduce((sum, count) => sum + count, 0)
  const writerCpuBefore = cpuSeconds(setup.writerPids)
  const postgresCpuBefore = serverCpuSeconds('postgres')
  const redisCpuBefore = serverCpuSeconds('redis-server')
  const started = process.hrtime.bigint()
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9
  const watch = watchDatabase(setup.db)
  await setup.queue.resume()
  // The queue, not the writer, is asked whether the backlog is drained: a scrape of the writer's
  // /metrics is work taken from the writer being measured (its aggregation-lag gauge is a query
  // of Postgres too), and Redis answers a count of each list in microseconds.
  await pollDrained(setup.queue, elapsed, 300)
  const storedSeconds = elapsed()
  if (!(await waitSummarised(setup.db, elapsed, 300))) throw new Error('writer alone: the summaries did not catch up within 300 s')
  const seconds = elapsed()
  const watched = await watch.stop()
  const writerCpu = cpuSeconds(setup.writerPids) - writerCpuBefore
  const postgresCpu = serverCpuSeconds('postgres') - postgresCpuBefore
  const redisCpu = serverCpuSeconds('redis-server') - redisCpuBefore
  const rows = await countSpans(setup.db, tenant.projectId)
  if (rows !== shape.backlog) throw new Error(`writer alone: ${rows} of ${shape.backlog} spans stored`)
  return { seconds, storedSeconds, stored: rows, writerCpu, postgresCpu, redisCpu, jobs, watched }
}
