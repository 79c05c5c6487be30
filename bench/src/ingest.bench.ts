// npm run bench:ingest — the trace ingest path against its ceilings, in one run on this machine.
//
//   raw ceiling     the same span rows COPY'd straight into a copy of the spans table (copy-ceiling.ts)
//   HTTP ceiling    a bare Fastify route that only parses the same JSON bodies (own child process)
//   ingest          `node apps/ingest/src/server.ts` as a child process, alone (HTTP → Redis); then
//                   `node apps/writer/src/server.ts` joins it for the end-to-end runs (HTTP → Redis →
//                   Postgres). Fresh database and queue prefix of their own.
//   writer alone    the queue paused while ingest fills it with a backlog, then resumed: the writer
//                   drains it with ingest idle, for the shapes LLM applications send (one-span
//                   traces sent one span a request over 64 connections, ten-span traces, 100-span
//                   traces of small ~0.75 KB and large ~1.5 KB spans), each against the COPY of the
//                   same rows. A drain ends when every span is stored and every summary includes it.
//                   Then two writers drain one backlog of ten-span traces, with pg_stat_activity
//                   sampled every 100 ms for writer backends waiting on a lock.
//   freshness       one-span traces paced at half the end-to-end rate: the time from each 200 to
//                   its trace's summary row (what the trace list, sessions and usage read).
//
// Targets (docs/benchmarks.md): writer alone ≥ 0.35 × COPY for one-span traces, ≥ 0.5 for ten-span
// traces, ≥ 0.6 for 100-span traces of both sizes; end to end ≥ 0.3 for one-span traces, ≥ 0.6
// for large spans and ≥ 0.5 for small ones; lock waits in ≤ 5% of samples with two writers;
// freshness p99 ≤ 5 s; no statement seen running over 1 s; 100-span accepted spans/s ≥ 0.5 ×
// parse-only and p99 ≤ 50 ms at half the max rate (paced evenly, paced-load.ts); 1-span
// requests/s ≥ 0.5 × parse-only; peak RSS ≤ 200 MiB each. Beside each end-to-end ratio: the CPU a
// span the whole path spent (load generator included), and what its target allows on these cores.
//
// The load generator (autocannon, in this process), ingest, writer, Redis and Postgres all share
// the machine's cores, and on this machine even a plain CPU loop varies by a third from one second
// to the next. So each ratio is measured in rounds that alternate the thing and its ceiling, and
// the median of the per-round ratios is what counts. Runs ~6 minutes and cleans up after itself
// (children, database, queue).
import { randomUUID } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { countSpans, type Db } from '@tracewell/db'
import { decodeTraceBody, encodeSpanRecords } from '@tracewell/otlp'
import Fastify from 'fastify'
import { announcePort, freePort, servicesRunAs, startScriptServer, startService, stopChild } from './child-processes.ts'
import { prepareCopyCeiling } from './copy-ceiling.ts'
import { bodyFactory, otlpBody } from './llm-spans.ts'
import { paced } from './paced-load.ts'
import { cpuSeconds, peakRssMiB, serverCpuSeconds } from './process-stats.ts'
import { median } from './statistics.ts'
import { alternate, createTenant, defaultConnections, drainBacklog, drainCpuSummary, out, pollStored, run, spansWritten, trafficShapes, type Measured, type Shape } from './write-path-load.ts'
import { lockWaitsSeen, measureFreshness, waitSummarised, watchDatabase, type DatabaseWatch } from './write-path-probes.ts'
import { openWritePathStack } from './write-path-stack.ts'

const rounds = 3
const roundSeconds = 5
const warmupSeconds = 2
const pacedSeconds = 10
const connections = defaultConnections
const copyRows = 50_000
// Sustained end to end: a warm-up through the whole path first (the writer starts cold, as ingest
// did before its own warm-up runs), then enough spans per round that filling and draining the
// pipeline are a small part of the measured time.
const endToEndWarmUpSpans = 20_000
const endToEndSpans = 100_000
// The writer alone drains a backlog of this many spans a round.
const backlogSpans = Number(process.env.WRITER_BACKLOG_SPANS ?? 300_000)
const targets = { endToEndRatio: { large: 0.6, small: 0.5 }, oneSpanEndToEndRatio: 0.3, spansRatio: 0.5, p99Ms: 50, oneSpanRatio: 0.5, rssMiB: 200, lockWaitShare: 0.05, freshnessP99Ms: 5_000, longestStatementMs: 1_000 }

const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL')

/** The size of the 'records' body ingest queues for one request of the shape, against the request's. */
function recordsRatio(shape: Pick<Shape, 'spansPerTrace' | 'size'>): number {
  const body = Buffer.from(bodyFactory(shape.spansPerTrace, shape.size)())
  return encodeSpanRecords(decodeTraceBody(body, 'json').spans).length / body.length
}
const shapes = trafficShapes(backlogSpans)

// ---- child: the parse-only ceiling, prints its port ----

async function serveParseOnly(): Promise<void> {
  const app = Fastify({ logger: false, bodyLimit: 10 * 1024 * 1024 })
  app.post('/parse', async (request) => {
    if (typeof request.body !== 'object' || request.body === null) throw new Error('not parsed')
    return { status: 200, message: 'Traces received successfully' }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  announcePort(app.server)
}

// ---- load ----

/**
 * Sends `spans` spans as traces of the shape at full speed and waits until the writer has stored
 * them all and its summariser has folded them: seconds from the first request to the poll that
 * saw both. The writer's counter is read instead of counting rows: a count(*) over 100k fresh rows
 * takes 70–160 ms here, and polled every few ms it would take a core from the pipeline it
 * measures. The caller checks the rows themselves afterwards.
 */
async function sendUntilStored(db: Db, url: string, key: string, writerPort: number, spans: number, shape: Pick<Shape, 'spansPerTrace' | 'size' | 'connections'>): Promise<{ seconds: number; stored: number; rejected: number }> {
  const before = await spansWritten([writerPort])
  const started = process.hrtime.bigint()
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9
  const sending = run({ url, connections: shape.connections, headers: { 'x-api-key': key }, body: bodyFactory(shape.spansPerTrace, shape.size), amount: spans / shape.spansPerTrace })
  const stored = await pollStored([writerPort], before, spans, elapsed, 120)
  if (!(await waitSummarised(db, elapsed, 180))) throw new Error('the summaries did not catch up within 180 s')
  const seconds = elapsed()
  const sent = await sending
  return { seconds, stored, rejected: sent.rejected + sent.errors }
}

// ---- main ----

async function main(): Promise<void> {
  const benchStarted = Date.now()
  const stack = await openWritePathStack('ingest')
  const { database, env, queue, children } = stack
  try {
    const load = await createTenant(database.db, 'bench-load')
    out(servicesRunAs())
    out(`bodies: 1 span ${otlpBody(1).length} B, 100 spans ${otlpBody(100).length} B (${(otlpBody(100).length / 100).toFixed(0)} B/span); ${connections} connections; ${rounds} alternating rounds of ${roundSeconds} s`)
    // What Redis holds and the writer parses for each request: the records ingest queues.
    out(`queued records against the body: ${shapes.map((shape) => `${shape.label} ${recordsRatio(shape).toFixed(2)}`).join(', ')}`)

    // Ingest alone first: the writer would take half of a 2-core machine from it. The backlog
    // these runs leave is discarded after each (discardQueue), and ingest's backlog bounds are
    // raised (stack.ingestEnv).
    const parseOnly = await startScriptServer(import.meta.url, ['serve-parse-only'])
    children.push(parseOnly.child)
    const ingestPort = await freePort()
    const ingest = await startService('apps/ingest/src/server.ts', stack.ingestEnv, ingestPort)
    children.push(ingest)
    const parseUrl = `http://127.0.0.1:${parseOnly.port}/parse`
    const traceUrl = `http://127.0.0.1:${ingestPort}/api/trace`
    const headers = { 'x-api-key': load.key }
    // autocannon stops at its deadline with requests still in flight; ingest finishes them (jobs
    // and payload lists) after it has returned, so the backlog is discarded only once they are in.
    const discardBacklog = async () => {
      await sleep(1_000)
      await stack.discardQueue()
    }
    const parseOnlyRate = (spans: number) => async () => (await run({ url: parseUrl, headers: {}, body: bodyFactory(spans) })).requestsPerSecond
    const ingestRun = (spans: number) => async () => {
      const result = await run({ url: traceUrl, headers, body: bodyFactory(spans) })
      await discardBacklog()
      return result
    }
    for (const spans of [100, 1]) {
      await run({ url: parseUrl, headers: {}, body: bodyFactory(spans), duration: warmupSeconds })
      await run({ url: traceUrl, headers, body: bodyFactory(spans), duration: warmupSeconds })
      await discardBacklog()
    }

    const requestRate = (result: Measured) => result.requestsPerSecond
    const hundred = await alternate('100-span req/s', rounds, parseOnlyRate(100), ingestRun(100), requestRate, 'req/s')
    const single = await alternate('1-span req/s', rounds, parseOnlyRate(1), ingestRun(1), requestRate, 'req/s')
    const maxIngest100 = median(hundred.results.map(requestRate))
    const maxParseOnly100 = median(hundred.ceilings)

    const bareHalfRate = Math.max(1, Math.floor(maxParseOnly100 / 2))
    const bareAtHalf = await paced({ url: parseUrl, headers: {}, body: bodyFactory(100), rate: bareHalfRate, seconds: pacedSeconds / 2, connections })
    await stopChild(parseOnly.child)
    const halfRate = Math.max(1, Math.floor(maxIngest100 / 2))
    const atHalf = await paced({ url: traceUrl, headers, body: bodyFactory(100), rate: halfRate, seconds: pacedSeconds, connections })
    await discardBacklog()
    const bursts = await run({ url: traceUrl, headers, body: bodyFactory(100), overallRate: halfRate, duration: pacedSeconds })
    await discardBacklog()
    out(`HTTP ceiling, parse-only: 100-span bodies ${(maxParseOnly100 * 100).toFixed(0)} spans/s (median); 1-span bodies ${median(single.ceilings).toFixed(0)} req/s (median)`)
    out(`ingest: 100-span bodies ${(maxIngest100 * 100).toFixed(0)} spans/s accepted (median), p99 ${median(hundred.results.map((result) => result.p99))} ms at full load; 1-span bodies ${median(single.results.map(requestRate)).toFixed(0)} req/s (median)`)
    const refused = [...hundred.results, ...single.results].reduce((sum, result) => sum + result.rejected + result.errors, 0)
    out(`  (${refused} requests rejected or failed in those runs)`)
    out(`parse-only, 100-span bodies paced at half its max (${bareHalfRate} req/s): p50 ${bareAtHalf.p50} ms, p99 ${bareAtHalf.p99} ms`)
    out(`ingest, 100-span bodies paced at half its max (${halfRate} req/s): p50 ${atHalf.p50} ms, p99 ${atHalf.p99} ms (${atHalf.failed} failed)`)
    out(`  (autocannon overallRate ${halfRate}, i.e. a burst at the top of each second: p50 ${bursts.p50} ms, p99 ${bursts.p99} ms)`)

    const writerPort = await freePort()
    const writer = await startService('apps/writer/src/server.ts', env, writerPort)
    children.push(writer)
    const warmUp = await createTenant(database.db, 'bench-warm-up')
    const writerPids = [writer.pid as number]
    const watches: DatabaseWatch[] = []

    // End to end for each shape, against the COPY of the same rows.
    // Beside each ratio, the CPU a span the path spent and what the target allows: the cores'
    // seconds over the spans a second the target asks for, so a shortfall says how much it is.
    const endToEnd = new Map<string, { ratio: number; target: number; cpuMicros: number; budgetMicros: number }>()
    const endToEndShapes = [
      { ...(shapes[0] as Shape), target: targets.oneSpanEndToEndRatio, spans: 40_000 },
      { ...(shapes[3] as Shape), target: targets.endToEndRatio.large, spans: endToEndSpans },
      { ...(shapes[2] as Shape), target: targets.endToEndRatio.small, spans: endToEndSpans },
    ]
    let oneSpanEndToEndRate = 0
    for (const shape of endToEndShapes) {
      // Each shape warmed up through the whole path first: the first round of small spans after
      // the large ones ran ~20% below the next two.
      await sendUntilStored(database.db, traceUrl, warmUp.key, writerPort, endToEndWarmUpSpans, shape)
      const processes: Record<string, () => number> = {
        ingest: () => cpuSeconds([ingest.pid as number]),
        writer: () => cpuSeconds(writerPids),
        postgres: () => serverCpuSeconds('postgres'),
        redis: () => serverCpuSeconds('redis-server'),
      }
      const copy = await prepareCopyCeiling(database.db, database.url, load.projectId, copyRows, shape.size)
      const cpuUsed = new Map<string, number>()
      const endToEndRound = async () => {
        const tenant = await createTenant(database.db, `bench-end-to-end-${randomUUID()}`)
        const cpuBefore = new Map(Object.entries(processes).map(([name, cpu]) => [name, cpu()]))
        const benchCpuBefore = process.cpuUsage()
        const watch = watchDatabase(database.db)
        const result = await sendUntilStored(database.db, traceUrl, tenant.key, writerPort, shape.spans, shape)
        watches.push(await watch.stop())
        const benchCpu = process.cpuUsage(benchCpuBefore)
        for (const [name, cpu] of Object.entries(processes)) cpuUsed.set(name, (cpuUsed.get(name) ?? 0) + cpu() - (cpuBefore.get(name) as number))
        cpuUsed.set('load generator', (cpuUsed.get('load generator') ?? 0) + (benchCpu.user + benchCpu.system) / 1e6)
        const rows = await countSpans(database.db, tenant.projectId)
        if (rows !== shape.spans || result.rejected > 0) throw new Error(`end to end: ${rows} of ${shape.spans} spans stored, ${result.rejected} requests rejected`)
        return result
      }
      const measured = await alternate(`end to end, ${shape.label}, spans/s`, rounds, () => copy.measure(), endToEndRound, (result) => result.stored / result.seconds, 'spans/s')
      await copy.drop()
      const rate = median(measured.results.map((result) => result.stored / result.seconds))
      if (shape.spansPerTrace === 1) oneSpanEndToEndRate = rate
      out(`end to end, ${shape.label}, ${shape.spans} spans a round (HTTP → Redis → writer → Postgres → summaries): ${rate.toFixed(0)} spans/s (median) against COPY of ${copyRows} rows ${median(measured.ceilings).toFixed(0)}; every row checked in Postgres`)
      const e2eSeconds = measured.results.reduce((sum, result) => sum + result.seconds, 0)
      const e2eStored = measured.results.reduce((sum, result) => sum + result.stored, 0)
      const cpuTotal = [...cpuUsed.values()].reduce((sum, seconds) => sum + seconds, 0)
      const perSpan = (seconds: number) => `${((seconds / e2eStored) * 1e6).toFixed(0)} µs`
      const budgetMicros = (availableParallelism() / (shape.target * median(measured.ceilings))) * 1e6
      endToEnd.set(shape.label, { ratio: measured.ratio, target: shape.target, cpuMicros: (cpuTotal / e2eStored) * 1e6, budgetMicros })
      out(`  CPU per span stored: ${[...cpuUsed].map(([name, seconds]) => `${name} ${perSpan(seconds)}`).join(', ')}; ${perSpan(cpuTotal)} in all, ${(cpuTotal / e2eSeconds).toFixed(2)} of ${availableParallelism()} cores busy (the COPY cost Postgres ${median(copy.postgresMicrosPerRow).toFixed(0)} µs a row); ${shape.target} of this COPY allows ${budgetMicros.toFixed(0)} µs`)
    }

    // Freshness: one-span traces paced at half the end-to-end rate, each timed from its 200 to its summary.
    const freshTenant = await createTenant(database.db, 'bench-freshness')
    const freshRate = Math.max(1, Math.floor(oneSpanEndToEndRate / 2))
    const fresh = await measureFreshness(database.db, traceUrl, { 'x-api-key': freshTenant.key }, bodyFactory(1, 'small'), freshRate, pacedSeconds)
    out(`freshness, one-span traces paced at ${freshRate} a second (half the end-to-end rate): 200 → summary p50 ${fresh.p50Ms.toFixed(0)} ms, p99 ${fresh.p99Ms.toFixed(0)} ms, max ${fresh.maxMs.toFixed(0)} ms over ${fresh.traces} traces (${fresh.missing} not seen)`)

    // The writer alone: a backlog queued while the queue is paused, then drained with ingest idle.
    const drainSetup = { db: database.db, queue, traceUrl }
    const writerAloneRound = (shape: Shape, writerPids: number[]) => () => drainBacklog({ ...drainSetup, writerPids }, shape)
    const writerAlone = new Map<string, { ratio: number; target: number }>()
    for (const shape of shapes) {
      const sizeCopy = await prepareCopyCeiling(database.db, database.url, load.projectId, copyRows, shape.size)
      const drained = await alternate(`writer alone, ${shape.label}`, rounds, () => sizeCopy.measure(), writerAloneRound(shape, writerPids), (result) => result.stored / result.seconds, 'spans/s')
      await sizeCopy.drop()
      writerAlone.set(shape.label, { ratio: drained.ratio, target: shape.writerAloneTarget })
      out(`writer alone, ${shape.label} (${(otlpBody(shape.spansPerTrace, shape.size).length / shape.spansPerTrace).toFixed(0)} B of OTLP JSON a span), a backlog of ${shape.backlog} in ${median(drained.results.map((result) => result.jobs))} jobs: ${median(drained.results.map((result) => result.stored / result.seconds)).toFixed(0)} spans/s (median) against COPY ${median(drained.ceilings).toFixed(0)}; ${drainCpuSummary(drained.results, { rate: median(drained.ceilings), postgresMicrosPerRow: sizeCopy.postgresMicrosPerRow }, shape.writerAloneTarget)}`)
    }

    // Two writers on one backlog of ten-span traces: their rate beside one writer's, and their lock waits.
    const tenSpan = shapes[1] as Shape
    const secondWriterPort = await freePort()
    const secondWriter = await startService('apps/writer/src/server.ts', env, secondWriterPort)
    children.push(secondWriter)
    const bothWriters = [...writerPids, secondWriter.pid as number]
    await sendUntilStored(database.db, traceUrl, warmUp.key, writerPort, endToEndWarmUpSpans, tenSpan).catch(() => undefined)
    const twoCopy = await prepareCopyCeiling(database.db, database.url, load.projectId, copyRows, tenSpan.size)
    const twoWriters = await alternate('two writers, ten-span traces', rounds, () => twoCopy.measure(), writerAloneRound(tenSpan, bothWriters), (result) => result.stored / result.seconds, 'spans/s')
    await twoCopy.drop()
    const twoSamples = twoWriters.results.reduce((sum, result) => sum + result.watched.samples, 0)
    const twoWaits = twoWriters.results.reduce((sum, result) => sum + result.watched.lockWaitSamples, 0)
    const lockWaitShare = twoWaits / Math.max(1, twoSamples)
    out(`two writers, ten-span traces: ${median(twoWriters.results.map((result) => result.stored / result.seconds)).toFixed(0)} spans/s (median; ${twoWriters.ratio.toFixed(2)} of COPY) against one writer's ${(writerAlone.get(tenSpan.label)?.ratio ?? 0).toFixed(2)}; a backend waited on a lock in ${twoWaits} of ${twoSamples} samples (${lockWaitsSeen(twoWriters.results.map((result) => result.watched))})`)
    const longest = watches.reduce((max, watch) => (watch.longestStatementMs > max.longestStatementMs ? watch : max), watches[0] as DatabaseWatch)
    const maxLag = Math.max(...watches.map((watch) => watch.maxLagSeconds))
    out(`longest statement seen running: ${longest.longestStatementMs.toFixed(0)} ms (${longest.longestStatement}); largest summary lag seen under full load: ${maxLag.toFixed(1)} s`)

    const rssIngest = peakRssMiB(ingest.pid as number)
    const rssWriter = peakRssMiB(writer.pid as number)
    out('')
    for (const [label, { ratio, target }] of writerAlone) out(`writer alone / COPY, ${label}: ${ratio.toFixed(2)} (target ≥ ${target})  ${verdict(ratio >= target)}`)
    for (const [label, { ratio, target, cpuMicros, budgetMicros }] of endToEnd) {
      out(`end to end / COPY, ${label}: ${ratio.toFixed(2)} (target ≥ ${target})  ${verdict(ratio >= target)}  (CPU a span ${cpuMicros.toFixed(0)} µs; the target allows ${budgetMicros.toFixed(0)})`)
    }
    out(`two writers, samples with a lock wait: ${(lockWaitShare * 100).toFixed(1)}% (target ≤ ${targets.lockWaitShare * 100}%)  ${verdict(lockWaitShare <= targets.lockWaitShare)}`)
    out(`freshness p99 at half the rate:    ${fresh.p99Ms.toFixed(0)} ms (target ≤ ${targets.freshnessP99Ms} ms)  ${verdict(fresh.p99Ms <= targets.freshnessP99Ms && fresh.missing === 0)}`)
    out(`longest statement:                 ${longest.longestStatementMs.toFixed(0)} ms (target ≤ ${targets.longestStatementMs} ms)  ${verdict(longest.longestStatementMs <= targets.longestStatementMs)}`)
    out(`100-span spans/s / parse-only:     ${hundred.ratio.toFixed(2)} (target ≥ ${targets.spansRatio})  ${verdict(hundred.ratio >= targets.spansRatio)}`)
    out(`100-span p99 at half max rate:     ${atHalf.p99} ms (target ≤ ${targets.p99Ms} ms)  ${verdict(atHalf.p99 <= targets.p99Ms)}`)
    out(`1-span req/s / parse-only:         ${single.ratio.toFixed(2)} (target ≥ ${targets.oneSpanRatio})  ${verdict(single.ratio >= targets.oneSpanRatio)}`)
    out(`peak RSS ingest:                   ${rssIngest.toFixed(0)} MiB (target ≤ ${targets.rssMiB})  ${verdict(rssIngest <= targets.rssMiB)}`)
    out(`peak RSS writer:                   ${rssWriter.toFixed(0)} MiB (target ≤ ${targets.rssMiB})  ${verdict(rssWriter <= targets.rssMiB)}`)
    out(`total run time: ${((Date.now() - benchStarted) / 1000).toFixed(0)} s`)
  } finally {
    await stack.close()
  }
}

if (process.argv[2] === 'serve-parse-only') await serveParseOnly()
else await main()
