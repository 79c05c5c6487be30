// npm run bench:writer — the writer alone, draining a backlog of one traffic shape, against a COPY
// of the same rows in the same run: bench:ingest's writer-alone figure without the rest of its
// twelve minutes, for trying a change to the write path.
//
//   SHAPES   which of bench:ingest's shapes, by the start of their label, comma-separated
//            (default "one-span,ten-span"; "100-span" names both 100-span shapes), or
//            "long-prompt": one-span traces of ~2.7 KB attributes, rows Postgres compresses
//   ROUNDS   alternating rounds of COPY and drain per shape (default 3)
//   WRITER_CONCURRENCY, WRITER_MAX_BODY_BYTES, SUMMARY_FOLD_MAX_TRACES   passed to the writer when set
//   ENQUEUE_LINGER_MS   passed to ingest when set (how long its queue writes wait for more requests)
//   WRITERS  writer processes draining the backlog together (default 1; bench:ingest's two-writer
//            figure is WRITERS=2 SHAPES=ten-span)
//
// Prints each round's ratio, the median, the writer's CPU a span, the jobs the backlog was queued
// as (what ingest's group commit made of the requests), how long storing the spans took of the
// drain (the rest is the summaries catching up), the samples of pg_stat_activity in which a
// writer's backend waited on a lock and on what, the longest statement seen, and the writers' peak RSS.
import { freePort, servicesRunAs, startService } from './child-processes.ts'
import { prepareCopyCeiling } from './copy-ceiling.ts'
import { peakRssMiB } from './process-stats.ts'
import { median } from './statistics.ts'
import { alternate, createTenant, drainBacklog, drainCpuSummary, longPromptShape, out, trafficShapes } from './write-path-load.ts'
import { lockWaitsSeen } from './write-path-probes.ts'
import { openWritePathStack } from './write-path-stack.ts'

const rounds = Number(process.env.ROUNDS ?? 3)
const wanted = (process.env.SHAPES ?? 'one-span,ten-span').split(',').map((name) => name.trim())
const copyRows = 50_000
const writers = Number(process.env.WRITERS ?? 1)
const drainedBy = writers === 1 ? 'writer alone' : `${writers} writers`

const stack = await openWritePathStack('writer')
const { database, env, queue, children } = stack
try {
  out(servicesRunAs())
  const ingestPort = await freePort()
  children.push(await startService('apps/ingest/src/server.ts', stack.ingestEnv, ingestPort))
  const tried = Object.fromEntries(['WRITER_CONCURRENCY', 'WRITER_MAX_BODY_BYTES', 'SUMMARY_FOLD_MAX_TRACES'].flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name] as string]])))
  const writerPids: number[] = []
  for (let i = 0; i < writers; i++) {
    const writer = await startService('apps/writer/src/server.ts', { ...env, ...tried }, await freePort())
    children.push(writer)
    writerPids.push(writer.pid as number)
  }
  const setup = { db: database.db, queue, traceUrl: `http://127.0.0.1:${ingestPort}/api/trace`, writerPids }
  const ceilingTenant = await createTenant(database.db, 'bench-copy')
  const shapes = [...trafficShapes(300_000), longPromptShape].filter((shape) => wanted.some((name) => shape.label.startsWith(name)))
  if (shapes.length === 0) throw new Error(`no shape starts with ${wanted.join(' or ')}`)
  // One drain of the first shape warms the writer (its first jobs pay for JIT and connections).
  await drainBacklog(setup, { ...(shapes[0] as (typeof shapes)[number]), backlog: 10_000 })
  for (const shape of shapes) {
    const copy = await prepareCopyCeiling(database.db, database.url, ceilingTenant.projectId, copyRows, shape.size)
    const drained = await alternate(`${drainedBy}, ${shape.label}`, rounds, () => copy.measure(), () => drainBacklog(setup, shape), (result) => result.stored / result.seconds, 'spans/s')
    await copy.drop()
    const stored = drained.results.reduce((sum, result) => sum + result.stored, 0)
    const jobs = drained.results.reduce((sum, result) => sum + result.jobs, 0)
    const ratios = drained.ratios.map((ratio) => ratio.toFixed(2)).join(', ')
    const samples = drained.results.reduce((sum, result) => sum + result.watched.samples, 0)
    const waits = drained.results.reduce((sum, result) => sum + result.watched.lockWaitSamples, 0)
    const longest = drained.results.map((result) => result.watched).reduce((a, b) => (b.longestStatementMs > a.longestStatementMs ? b : a))
    out(`${drainedBy} / COPY, ${shape.label}: ${drained.ratio.toFixed(2)} (rounds ${ratios}; target ≥ ${shape.writerAloneTarget}); ${median(drained.results.map((result) => result.stored / result.seconds)).toFixed(0)} spans/s; ${drainCpuSummary(drained.results, { rate: median(drained.ceilings), postgresMicrosPerRow: copy.postgresMicrosPerRow }, shape.writerAloneTarget)}; ${(stored / jobs).toFixed(1)} spans a job; spans stored in ${median(drained.results.map((result) => result.storedSeconds)).toFixed(1)} s of ${median(drained.results.map((result) => result.seconds)).toFixed(1)} s (the rest: the summaries catching up); a backend waited on a lock in ${waits} of ${samples} samples (${lockWaitsSeen(drained.results.map((result) => result.watched))}); the longest statement ran ${longest.longestStatementMs.toFixed(0)} ms (${longest.longestStatement.slice(0, 40)}); peak RSS so far ${writerPids.map((pid) => `${peakRssMiB(pid).toFixed(0)} MiB`).join(', ')}`)
  }
} finally {
  await stack.close()
}
