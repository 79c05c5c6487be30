// npm run bench:one-span — bench:ingest's end to end of one-span traces alone (issue 49 §7: at most
// 160 µs of CPU a span, ingest + writer + Postgres + Redis, the load generator apart), for trying a
// change to the path without the rest of its twelve minutes.
//
//   ROUNDS   rounds of SPANS one-span traces, sent over 64 connections at full speed (default 3)
//   SPANS    spans a round (default 40000, bench:ingest's)
//   ENQUEUE_LINGER_MS, ENQUEUE_LINGER_QUIET_MS   passed to ingest when set
//   WRITER_CONCURRENCY, WRITER_MAX_BODY_BYTES, WRITER_LINGER_MS, SUMMARY_POLL_MS   passed to the writer when set
//
// Prints, a round and in all: spans/s, CPU a span of each process, the jobs the writer took (spans
// a job) and the commands Redis ran a span: what separates a span end to end from one the writer
// drains from a backlog, where jobs are larger and ingest is idle. And the processes' CPU divided by
// the load generator's, which does the same work in every run: this machine's speed moves by half
// within minutes, and that ratio compares runs of two trees made next to each other
// (docs/benchmarks.md, issue 49 §7 against the code the issue measured).
import { randomUUID } from 'node:crypto'
import { freePort, servicesRunAs, startService } from './child-processes.ts'
import { bodyFactory } from './llm-spans.ts'
import { cpuSeconds, serverCpuSeconds } from './process-stats.ts'
import { createTenant, out, pollStored, run, spansWritten, trafficShapes } from './write-path-load.ts'
import { waitSummarised } from './write-path-probes.ts'
import { openWritePathStack } from './write-path-stack.ts'

const rounds = Number(process.env.ROUNDS ?? 3)
const spansPerRound = Number(process.env.SPANS ?? 40_000)
const warmUpSpans = 20_000
const shape = trafficShapes(0)[0] as ReturnType<typeof trafficShapes>[number]
const passed = (names: readonly string[]) => Object.fromEntries(names.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name] as string]])))

/** Jobs the writer has finished (each is timed once by its batch-duration histogram). */
async function jobsDone(port: number): Promise<number> {
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  return Number(/^tracewell_writer_batch_duration_seconds_count (\d+)$/m.exec(metrics)?.[1] ?? Number.NaN)
}

const stack = await openWritePathStack('one-span')
const { database, env, children, redis } = stack
try {
  out(`${servicesRunAs()}; ${rounds} rounds of ${spansPerRound} one-span traces over ${shape.connections} connections`)
  const ingestPort = await freePort()
  const ingestEnv = { ...stack.ingestEnv, ...passed(['ENQUEUE_LINGER_QUIET_MS']) }
  const ingest = await startService('apps/ingest/src/server.ts', ingestEnv, ingestPort)
  children.push(ingest)
  const writerPort = await freePort()
  const writer = await startService('apps/writer/src/server.ts', { ...env, ...passed(['WRITER_CONCURRENCY', 'WRITER_MAX_BODY_BYTES', 'WRITER_LINGER_MS', 'SUMMARY_POLL_MS']) }, writerPort)
  children.push(writer)
  const traceUrl = `http://127.0.0.1:${ingestPort}/api/trace`
  const redisCommands = async () => Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1])

  const send = async (spans: number) => {
    const tenant = await createTenant(database.db, `bench-one-span-${randomUUID()}`)
    const before = await spansWritten([writerPort])
    const started = process.hrtime.bigint()
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9
    const sending = run({ url: traceUrl, connections: shape.connections, headers: { 'x-api-key': tenant.key }, body: bodyFactory(1, shape.size), amount: spans })
    const stored = await pollStored([writerPort], before, spans, elapsed, 120)
    if (!(await waitSummarised(database.db, elapsed, 180))) throw new Error('the summaries did not catch up within 180 s')
    const seconds = elapsed()
    const sent = await sending
    if (stored !== spans || sent.rejected + sent.errors > 0) throw new Error(`${stored} of ${spans} spans stored, ${sent.rejected + sent.errors} requests refused`)
    return { seconds, p50: sent.p50, p99: sent.p99 }
  }
  await send(warmUpSpans)

  const processes: Record<string, () => number> = {
    ingest: () => cpuSeconds([ingest.pid as number]),
    writer: () => cpuSeconds([writer.pid as number]),
    postgres: () => serverCpuSeconds('postgres'),
    redis: () => serverCpuSeconds('redis-server'),
  }
  const totals = new Map<string, number>()
  let totalJobs = 0
  let totalCommands = 0
  let loadGeneratorSeconds = 0
  for (let round = 1; round <= rounds; round++) {
    const cpuBefore = new Map(Object.entries(processes).map(([name, cpu]) => [name, cpu()]))
    const benchBefore = process.cpuUsage()
    const [jobsBefore, commandsBefore] = [await jobsDone(writerPort), await redisCommands()]
    const result = await send(spansPerRound)
    const bench = process.cpuUsage(benchBefore)
    const jobs = (await jobsDone(writerPort)) - jobsBefore
    const commands = (await redisCommands()) - commandsBefore
    const used = new Map(Object.entries(processes).map(([name, cpu]) => [name, cpu() - (cpuBefore.get(name) as number)]))
    for (const [name, seconds] of used) totals.set(name, (totals.get(name) ?? 0) + seconds)
    totalJobs += jobs
    totalCommands += commands
    const loadGenerator = (bench.user + bench.system) / 1e6
    loadGeneratorSeconds += loadGenerator
    const all = [...used.values()].reduce((sum, seconds) => sum + seconds, 0)
    const micros = (seconds: number) => ((seconds / spansPerRound) * 1e6).toFixed(0)
    out(
      `round ${round}: ${(spansPerRound / result.seconds).toFixed(0)} spans/s, p50 ${result.p50} ms, p99 ${result.p99} ms; CPU a span: ${[...used].map(([name, seconds]) => `${name} ${micros(seconds)}`).join(', ')}, ${micros(all)} µs in all (load generator ${micros(loadGenerator)}; in all ÷ load generator ${(all / loadGenerator).toFixed(2)}); ${(spansPerRound / jobs).toFixed(1)} spans a job; Redis ${(commands / spansPerRound).toFixed(2)} commands a span`,
    )
  }
  const stored = rounds * spansPerRound
  const all = [...totals.values()].reduce((sum, seconds) => sum + seconds, 0)
  const micros = (seconds: number) => ((seconds / stored) * 1e6).toFixed(0)
  out(`all rounds: CPU a span ${[...totals].map(([name, seconds]) => `${name} ${micros(seconds)}`).join(', ')}, **${micros(all)} µs** in all (target ≤ 160), ${(all / loadGeneratorSeconds).toFixed(2)} of the load generator's; ${(stored / totalJobs).toFixed(1)} spans a job; Redis ${(totalCommands / stored).toFixed(2)} commands a span`)
} finally {
  await stack.close()
}
