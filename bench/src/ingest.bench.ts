// npm run bench:ingest — the trace ingest path against its ceilings, in one run on this machine.
//
//   raw ceiling     the same span rows COPY'd straight into a copy of the spans table (psql \copy)
//   HTTP ceiling    a bare Fastify route that only parses the same JSON bodies (own child process)
//   ingest          `node apps/ingest/src/server.ts` as a child process, alone (HTTP → Redis); then
//                   `node apps/writer/src/server.ts` joins it for the end-to-end run (HTTP → Redis →
//                   Postgres). Fresh database and queue prefix of their own.
//
// Targets (issue): end-to-end ≥ 0.6 × COPY; 100-span accepted spans/s ≥ 0.5 × parse-only and
// p99 ≤ 50 ms at half the max rate (paced evenly, paced-load.ts); 1-span requests/s ≥ 0.5 × parse-only; peak RSS ≤ 256 MiB each.
// The load generator (autocannon, in this process), ingest, writer, Redis and Postgres all share
// the machine's cores, so every ratio is measured under that contention. Runs ~2.5 minutes and
// cleans up after itself (children, database, queue).
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { availableParallelism } from 'node:os'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { displayPrefix, generateApiKey, hashApiKey } from '@tracewell/auth'
import { loadConfig, TestEnvironmentSchema } from '@tracewell/config'
import { countSpans, createProject, createTeam, insertApiKey, nanosToIsoMicros, sql, type Db } from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import { decodeJsonTraces, type SpanRecord } from '@tracewell/otlp'
import { QueueNames } from '@tracewell/queue'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import Fastify from 'fastify'
import { discardQueue } from './discard-queue.ts'
import { paced } from './paced-load.ts'
import { cpuSeconds, peakRssMiB, pidsNamed } from './process-stats.ts'
import { serviceNodeFlags } from './service-node-flags.ts'

const measureSeconds = 10
const warmupSeconds = 2
const connections = 50
const copyRows = 50_000
// Sustained end to end: a warm-up through the whole path first (the writer starts cold, as ingest
// did before its own warm-up runs), then enough spans that filling and draining the pipeline are
// a small part of the measured time.
const endToEndWarmUpSpans = 20_000
const endToEndSpans = 100_000
// How often the end-to-end run asks the writer how many spans it has stored.
const storedPollMs = 25
const targets = { endToEndRatio: 0.6, spansRatio: 0.5, p99Ms: 50, oneSpanRatio: 0.5, rssMiB: 256 }
const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL')

// ---- realistic LLM spans: OTLP JSON, list-form attributes, ~1.3 KB each ----

const TRACE_PLACEHOLDER = 'TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT' // 32 characters, replaced per request

function llmSpan(index: number): object {
  const attribute = (key: string, value: object) => ({ key, value })
  const messages = JSON.stringify([
    { role: 'system', content: 'You are a support assistant for Acme. Answer briefly, cite the order number, and never promise refunds.' },
    { role: 'user', content: `Order #${10_000 + index} arrived damaged: the box was crushed and the blender jar has a crack near the handle. What can I do?` },
  ])
  const choices = JSON.stringify([
    { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `Sorry about order #${10_000 + index}. Please send a photo of the crack; we will ship a replacement jar within 3 days.` } },
  ])
  const start = 1_795_316_906_000_000_000n + BigInt(index) * 1_000_000n
  return {
    traceId: TRACE_PLACEHOLDER,
    spanId: (index + 1).toString(16).padStart(16, '0'),
    parentSpanId: index === 0 ? '' : '0000000000000001',
    name: 'openai.chat.completions.create',
    kind: 3,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 734_512_345n),
    attributes: [
      attribute('langtrace.service.name', { stringValue: 'openai' }),
      attribute('llm.vendor', { stringValue: 'openai' }),
      attribute('llm.request.model', { stringValue: 'gpt-4o-mini' }),
      attribute('llm.response.model', { stringValue: 'gpt-4o-mini-2024-07-18' }),
      attribute('llm.request.type', { stringValue: 'chat_completion' }),
      attribute('llm.request.temperature', { doubleValue: 0.2 }),
      attribute('llm.request.stream', { boolValue: false }),
      attribute('llm.usage.prompt_tokens', { intValue: '57' }),
      attribute('llm.usage.completion_tokens', { intValue: '31' }),
      attribute('llm.usage.total_tokens', { intValue: '88' }),
      attribute('llm.request.messages', { stringValue: messages }),
      attribute('llm.response.choices', { stringValue: choices }),
    ],
    status: { code: 1 },
  }
}

function otlpBody(spanCount: number): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'support-bot' } }, { key: 'service.version', value: { stringValue: '2.3.1' } }] },
        scopeSpans: [{ scope: { name: '@langtrase/typescript-sdk', version: '6.3.7' }, spans: Array.from({ length: spanCount }, (_, index) => llmSpan(index)) }],
      },
    ],
  })
}

/** Bodies with a trace id of their own each, so the writer stores every span (no idempotent skips). */
function bodyFactory(spanCount: number): () => string {
  const template = otlpBody(spanCount)
  const runTag = randomBytes(8).toString('hex')
  let counter = 0
  return () => template.replaceAll(TRACE_PLACEHOLDER, `${runTag}${(++counter).toString(16).padStart(16, '0')}`)
}

// ---- child: the parse-only ceiling, prints its port ----

async function serveParseOnly(): Promise<void> {
  const app = Fastify({ logger: false, bodyLimit: 10 * 1024 * 1024 })
  app.post('/parse', async (request) => {
    if (typeof request.body !== 'object' || request.body === null) throw new Error('not parsed')
    return { status: 200, message: 'Traces received successfully' }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  process.stdout.write(`${JSON.stringify({ port: (app.server.address() as { port: number }).port })}\n`)
}

// ---- processes ----

async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

async function startParseOnly(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...serviceNodeFlags, fileURLToPath(import.meta.url), 'serve-parse-only'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  const [line] = (await Promise.race([once(lines, 'line'), once(child, 'exit').then(() => { throw new Error('parse-only server exited') })])) as [string]
  return { child, port: (JSON.parse(line) as { port: number }).port }
}

async function startService(entry: string, env: Record<string, string>, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...serviceNodeFlags, `${repoRoot}${entry}`], { env: { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'inherit', 'inherit'] })
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${entry} exited with ${child.exitCode}`)
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined)
    if (ready?.status === 200) return child
    await sleep(100)
  }
  throw new Error(`${entry} not ready within 30 s`)
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const exited = once(child, 'exit')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

// ---- load ----

interface Load {
  url: string
  headers: Record<string, string>
  body: () => string
  duration?: number
  amount?: number
  overallRate?: number
}

interface Measured {
  requestsPerSecond: number
  ok: number
  rejected: number
  errors: number
  seconds: number
  p50: number
  p99: number
}

async function run(load: Load): Promise<Measured> {
  const result = await autocannon({
    url: load.url,
    connections,
    ...(load.amount ? { amount: load.amount } : { duration: load.duration ?? measureSeconds }),
    ...(load.overallRate ? { overallRate: load.overallRate } : {}),
    requests: [{ method: 'POST', headers: { 'content-type': 'application/json', ...load.headers }, setupRequest: (request) => ({ ...request, body: load.body() }) }],
  })
  return {
    requestsPerSecond: result['2xx'] / result.duration,
    ok: result['2xx'],
    rejected: result.non2xx,
    errors: result.errors + result.timeouts,
    seconds: result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
  }
}

/** The writer's count of spans stored (committed) since it started, from its /metrics. */
async function spansWritten(writerPort: number): Promise<number> {
  const metrics = await (await fetch(`http://127.0.0.1:${writerPort}/metrics`)).text()
  return Number(/^tracewell_writer_spans_written_total (\d+)$/m.exec(metrics)?.[1] ?? Number.NaN)
}

/**
 * Sends `spans` spans in 100-span bodies at full speed and waits until the writer has stored them
 * all: seconds from the first request to the poll that saw the last span committed. The writer's
 * counter is read instead of counting rows: a count(*) over 100k fresh rows takes 70–160 ms here,
 * and polled every few ms it would take a core from the pipeline it measures. The caller checks
 * the rows themselves afterwards.
 */
async function sendUntilStored(url: string, key: string, writerPort: number, spans: number): Promise<{ seconds: number; stored: number; rejected: number }> {
  const before = await spansWritten(writerPort)
  const started = process.hrtime.bigint()
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9
  const sending = run({ url, headers: { 'x-api-key': key }, body: bodyFactory(100), amount: spans / 100 })
  let stored = 0
  while (stored < spans && elapsed() < 120) {
    await sleep(storedPollMs)
    stored = (await spansWritten(writerPort)) - before
  }
  const seconds = elapsed()
  const sent = await sending
  return { seconds, stored, rejected: sent.rejected + sent.errors }
}

async function measure(load: Load): Promise<Measured> {
  await run({ ...load, duration: warmupSeconds })
  return run(load)
}

// ---- the raw ceiling: COPY ----

const copyColumns = [
  'project_id', 'trace_id', 'span_id', 'parent_span_id', 'name', 'kind', 'start_time', 'end_time', 'duration_ns', 'trace_state',
  'status_code', 'status_message', 'service_name', 'service_version', 'scope_name', 'scope_version', 'llm_vendor', 'llm_model',
  'llm_request_type', 'input_tokens', 'output_tokens', 'total_tokens', 'attributes', 'resource_attributes', 'events', 'links',
] as const

function csvField(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value)
  return `"${text.replaceAll('"', '""')}"`
}

function csvRow(projectId: string, traceId: string, span: SpanRecord): string {
  return [
    projectId, traceId, span.spanId, span.parentSpanId, span.name, span.kind, nanosToIsoMicros(span.startTimeUnixNano), nanosToIsoMicros(span.endTimeUnixNano),
    span.durationNs, span.traceState, span.statusCode, span.statusMessage, span.serviceName, span.serviceVersion, span.scopeName, span.scopeVersion,
    span.llmVendor, span.llmModel, span.llmRequestType, span.inputTokens, span.outputTokens, span.totalTokens, span.attributes,
    span.resourceAttributes, span.events, span.links,
  ].map(csvField).join(',')
}

/** Spans/s of COPY into a copy of the spans table (same columns, keys and indexes). */
async function copyCeiling(db: Db, databaseUrl: string, projectId: string): Promise<number> {
  await sql`create table spans_copy (like spans including all)`.execute(db)
  const nextBody = bodyFactory(100)
  const lines: string[] = []
  while (lines.length < copyRows) {
    const body = nextBody()
    const { spans } = decodeJsonTraces(JSON.parse(body))
    for (const span of spans) lines.push(csvRow(projectId, span.traceId, span))
  }
  const csv = Buffer.from(`${lines.join('\n')}\n`)
  const started = process.hrtime.bigint()
  const psql = spawn('psql', [databaseUrl, '-v', 'ON_ERROR_STOP=1', '-q', '-c', `\\copy spans_copy (${copyColumns.join(', ')}) from stdin with (format csv)`], { stdio: ['pipe', 'inherit', 'inherit'] })
  psql.stdin.end(csv)
  const [code] = (await once(psql, 'exit')) as [number]
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  if (code !== 0) throw new Error(`psql \\copy exited with ${code}`)
  const { rows } = await sql<{ count: string }>`select count(*)::text as count from spans_copy`.execute(db)
  if (Number(rows[0]?.count) !== lines.length) throw new Error('COPY stored a different number of rows')
  await sql`drop table spans_copy`.execute(db)
  return lines.length / seconds
}

// ---- main ----

async function createTenant(db: Db, name: string): Promise<{ projectId: string; key: string }> {
  const team = await createTeam(db, { name })
  const project = await createProject(db, { teamId: team.id, name })
  const key = generateApiKey('project')
  await insertApiKey(db, { kind: 'project', teamId: team.id, projectId: project.id, keyHash: hashApiKey(key), prefix: displayPrefix(key) })
  return { projectId: project.id, key }
}

async function main(): Promise<void> {
  const benchStarted = Date.now()
  const { REDIS_URL } = loadConfig(TestEnvironmentSchema)
  const database = await createTestDatabase()
  const prefix = `bench-ingest-${randomUUID()}`
  const queue = new Queue(QueueNames.spanBatches, { connection: { url: REDIS_URL }, prefix })
  const redis = new Redis(REDIS_URL)
  const children: ChildProcess[] = []
  const out = (line: string) => process.stdout.write(`${line}\n`)
  try {
    const load = await createTenant(database.db, 'bench-load')
    const warmUp = await createTenant(database.db, 'bench-warm-up')
    const endToEnd = await createTenant(database.db, 'bench-end-to-end')
    const span1 = otlpBody(1).length
    const span100 = otlpBody(100).length
    out(`bodies: 1 span ${span1} B, 100 spans ${span100} B (${(span100 / 100).toFixed(0)} B/span); ${connections} connections, ${measureSeconds} s per run`)

    const copySpansPerSecond = await copyCeiling(database.db, database.url, load.projectId)
    out(`raw ceiling, COPY ${copyRows} rows:               ${copySpansPerSecond.toFixed(0)} spans/s`)

    const parseOnly = await startParseOnly()
    children.push(parseOnly.child)
    const parseUrl = `http://127.0.0.1:${parseOnly.port}/parse`
    const bare100 = await measure({ url: parseUrl, headers: {}, body: bodyFactory(100) })
    const bare1 = await measure({ url: parseUrl, headers: {}, body: bodyFactory(1) })
    const bareHalfRate = Math.max(1, Math.floor(bare100.requestsPerSecond / 2))
    const bareAtHalf = await paced({ url: parseUrl, headers: {}, body: bodyFactory(100), rate: bareHalfRate, seconds: measureSeconds / 2, connections })
    await stopChild(parseOnly.child)
    out(`HTTP ceiling, parse-only, 100-span bodies:    ${(bare100.requestsPerSecond * 100).toFixed(0)} spans/s, ${bare100.requestsPerSecond.toFixed(0)} req/s, p50 ${bare100.p50} ms, p99 ${bare100.p99} ms`)
    out(`HTTP ceiling, parse-only, 1-span bodies:      ${bare1.requestsPerSecond.toFixed(0)} req/s, p50 ${bare1.p50} ms, p99 ${bare1.p99} ms`)
    out(`HTTP ceiling, parse-only, 100-span bodies paced at half its max (${bareHalfRate} req/s): p50 ${bareAtHalf.p50} ms, p99 ${bareAtHalf.p99} ms`)

    // Ingest alone first: the writer would take half of a 2-core machine from it. The backlog
    // these runs leave is discarded after each (discardQueue), and the bound is raised so that
    // admission control does not answer 429 while nothing drains the queue.
    const env = { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: prefix }
    const ingestPort = await freePort()
    const ingest = await startService('apps/ingest/src/server.ts', { ...env, QUEUE_MAX_BACKLOG: '2000000' }, ingestPort)
    children.push(ingest)
    const traceUrl = `http://127.0.0.1:${ingestPort}/api/trace`
    const headers = { 'x-api-key': load.key }
    const discardBacklog = () => discardQueue(queue, redis, prefix)
    const measureIngest = async (body: () => string) => {
      await run({ url: traceUrl, headers, body, duration: warmupSeconds })
      await discardBacklog()
      const result = await run({ url: traceUrl, headers, body })
      await discardBacklog()
      return result
    }

    const ingest100 = await measureIngest(bodyFactory(100))
    out(`ingest, 100-span bodies:                      ${(ingest100.requestsPerSecond * 100).toFixed(0)} spans/s accepted, ${ingest100.requestsPerSecond.toFixed(0)} req/s, p50 ${ingest100.p50} ms, p99 ${ingest100.p99} ms (${ingest100.rejected} rejected, ${ingest100.errors} errors)`)
    const ingest1 = await measureIngest(bodyFactory(1))
    out(`ingest, 1-span bodies:                        ${ingest1.requestsPerSecond.toFixed(0)} req/s, p50 ${ingest1.p50} ms, p99 ${ingest1.p99} ms (${ingest1.rejected} rejected, ${ingest1.errors} errors)`)
    const halfRate = Math.max(1, Math.floor(ingest100.requestsPerSecond / 2))
    const atHalf = await paced({ url: traceUrl, headers, body: bodyFactory(100), rate: halfRate, seconds: measureSeconds, connections })
    await discardBacklog()
    out(`ingest, 100-span bodies paced at half max (${halfRate} req/s): p50 ${atHalf.p50} ms, p99 ${atHalf.p99} ms (${atHalf.failed} failed)`)
    const bursts = await run({ url: traceUrl, headers, body: bodyFactory(100), overallRate: halfRate })
    await discardBacklog()
    out(`  (autocannon overallRate ${halfRate}, i.e. a burst at the top of each second: p50 ${bursts.p50} ms, p99 ${bursts.p99} ms)`)

    const writerPort = await freePort()
    const writer = await startService('apps/writer/src/server.ts', env, writerPort)
    children.push(writer)

    const sendAndStore = (key: string, spans: number) => sendUntilStored(traceUrl, key, writerPort, spans)
    await sendAndStore(warmUp.key, endToEndWarmUpSpans)
    const processes = { ingest: [ingest.pid as number], writer: [writer.pid as number], postgres: pidsNamed('postgres'), redis: pidsNamed('redis-server') }
    const cpuBefore = Object.fromEntries(Object.entries(processes).map(([name, pids]) => [name, cpuSeconds(pids)]))
    const benchCpuBefore = process.cpuUsage()
    const e2e = await sendAndStore(endToEnd.key, endToEndSpans)
    const benchCpu = process.cpuUsage(benchCpuBefore)
    const stored = await countSpans(database.db, endToEnd.projectId)
    const e2eSpansPerSecond = e2e.stored / e2e.seconds
    out(`end to end, ${endToEndSpans} spans after ${endToEndWarmUpSpans} to warm up (HTTP → Redis → writer → Postgres): ${e2eSpansPerSecond.toFixed(0)} spans/s (${stored} rows in Postgres after ${e2e.seconds.toFixed(1)} s; ${e2e.rejected} rejected)`)
    const cpuUsed = [
      ...Object.entries(processes).map(([name, pids]) => [name, cpuSeconds(pids) - (cpuBefore[name] as number)] as const),
      ['load generator', (benchCpu.user + benchCpu.system) / 1e6] as const,
    ]
    const cpuTotal = cpuUsed.reduce((sum, [, seconds]) => sum + seconds, 0)
    const perSpan = (seconds: number) => `${((seconds / e2e.stored) * 1e6).toFixed(0)} µs`
    out(`  CPU per span stored: ${cpuUsed.map(([name, seconds]) => `${name} ${perSpan(seconds)}`).join(', ')}; ${perSpan(cpuTotal)} in all, ${(cpuTotal / e2e.seconds).toFixed(2)} of ${availableParallelism()} cores busy`)

    const rssIngest = peakRssMiB(ingest.pid as number)
    const rssWriter = peakRssMiB(writer.pid as number)

    const e2eRatio = e2eSpansPerSecond / copySpansPerSecond
    const spansRatio = ingest100.requestsPerSecond / bare100.requestsPerSecond
    const oneSpanRatio = ingest1.requestsPerSecond / bare1.requestsPerSecond
    out('')
    out(`end to end / COPY:                 ${e2eRatio.toFixed(2)} (target ≥ ${targets.endToEndRatio})  ${verdict(e2eRatio >= targets.endToEndRatio && stored === endToEndSpans)}`)
    out(`100-span spans/s / parse-only:     ${spansRatio.toFixed(2)} (target ≥ ${targets.spansRatio})  ${verdict(spansRatio >= targets.spansRatio)}`)
    out(`100-span p99 at half max rate:     ${atHalf.p99} ms (target ≤ ${targets.p99Ms} ms)  ${verdict(atHalf.p99 <= targets.p99Ms)}`)
    out(`1-span req/s / parse-only:         ${oneSpanRatio.toFixed(2)} (target ≥ ${targets.oneSpanRatio})  ${verdict(oneSpanRatio >= targets.oneSpanRatio)}`)
    out(`peak RSS ingest:                   ${rssIngest.toFixed(0)} MiB (target ≤ ${targets.rssMiB})  ${verdict(rssIngest <= targets.rssMiB)}`)
    out(`peak RSS writer:                   ${rssWriter.toFixed(0)} MiB (target ≤ ${targets.rssMiB})  ${verdict(rssWriter <= targets.rssMiB)}`)
    out(`total run time: ${((Date.now() - benchStarted) / 1000).toFixed(0)} s`)
  } finally {
    for (const child of children) await stopChild(child)
    await discardQueue(queue, redis, prefix).catch(() => {})
    await queue.close()
    await redis.quit()
    await database.drop()
  }
}

if (process.argv[2] === 'serve-parse-only') await serveParseOnly()
else await main()
