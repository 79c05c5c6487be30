// npm run bench:writer — the writer alone, draining a backlog of one traffic shape, against a COPY
// of the same rows in the same run: bench:ingest's writer-alone figure without the rest of its
// twelve minutes, for trying a change to the write path.
//
//   SHAPES   which of bench:ingest's shapes, by the start of their label (default
//            "one-span,ten-span"; also "100-span traces, small", "100-span traces, large")
//   ROUNDS   alternating rounds of COPY and drain per shape (default 3)
//   WRITER_CONCURRENCY, WRITER_MAX_BODY_BYTES, SUMMARY_FOLD_MAX_TRACES   passed to the writer when set
//
// Prints each round's ratio, the median, the writer's CPU a span, the jobs the backlog was queued
// as (what ingest's group commit made of the requests) and the writer's peak RSS.
import { testEnvironment } from '@tracewell/config'
import { createTestDatabase } from '@tracewell/db/testing'
import { QueueNames } from '@tracewell/queue'
import { randomUUID } from 'node:crypto'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { freePort, servicesRunAs, startService, stopChild } from './child-processes.ts'
import { prepareCopyCeiling } from './copy-ceiling.ts'
import { discardQueue } from './discard-queue.ts'
import { peakRssMiB } from './process-stats.ts'
import { median } from './statistics.ts'
import { alternate, createTenant, drainBacklog, out, trafficShapes } from './write-path-load.ts'

const rounds = Number(process.env.ROUNDS ?? 3)
const wanted = (process.env.SHAPES ?? 'one-span,ten-span').split(',').map((name) => name.trim())
const copyRows = 50_000

const { REDIS_URL } = testEnvironment()
const database = await createTestDatabase()
const prefix = `bench-writer-${randomUUID()}`
const queue = new Queue(QueueNames.spanBatches, { connection: { url: REDIS_URL }, prefix })
const redis = new Redis(REDIS_URL)
const children = []
try {
  out(servicesRunAs())
  const env = { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: prefix }
  const ingestPort = await freePort()
  children.push(await startService('apps/ingest/src/server.ts', { ...env, QUEUE_MAX_BACKLOG: '2000000', QUEUE_MAX_BACKLOG_BYTES: String(4 * 1024 ** 3) }, ingestPort))
  const writerPort = await freePort()
  const tried = Object.fromEntries(['WRITER_CONCURRENCY', 'WRITER_MAX_BODY_BYTES', 'SUMMARY_FOLD_MAX_TRACES'].flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name] as string]])))
  const writer = await startService('apps/writer/src/server.ts', { ...env, ...tried }, writerPort)
  children.push(writer)
  const setup = { db: database.db, queue, traceUrl: `http://127.0.0.1:${ingestPort}/api/trace`, writerPids: [writer.pid as number], writerPorts: [writerPort] }
  const ceilingTenant = await createTenant(database.db, 'bench-copy')
  const shapes = trafficShapes(300_000).filter((shape) => wanted.some((name) => shape.label.startsWith(name)))
  if (shapes.length === 0) throw new Error(`no shape starts with ${wanted.join(' or ')}`)
  // One drain of the first shape warms the writer (its first jobs pay for JIT and connections).
  await drainBacklog(setup, { ...(shapes[0] as (typeof shapes)[number]), backlog: 10_000 })
  for (const shape of shapes) {
    const copy = await prepareCopyCeiling(database.db, database.url, ceilingTenant.projectId, copyRows, shape.size)
    const drained = await alternate(`writer alone, ${shape.label}`, rounds, () => copy.measure(), () => drainBacklog(setup, shape), (result) => result.stored / result.seconds, 'spans/s')
    await copy.drop()
    const stored = drained.results.reduce((sum, result) => sum + result.stored, 0)
    const perSpan = (cpu: (result: (typeof drained.results)[number]) => number) => `${((drained.results.reduce((sum, result) => sum + cpu(result), 0) / stored) * 1e6).toFixed(0)} µs`
    const jobs = drained.results.reduce((sum, result) => sum + result.jobs, 0)
    const ratios = drained.ratios.map((ratio) => ratio.toFixed(2)).join(', ')
    out(`writer alone / COPY, ${shape.label}: ${drained.ratio.toFixed(2)} (rounds ${ratios}; target ≥ ${shape.writerAloneTarget}); ${median(drained.results.map((result) => result.stored / result.seconds)).toFixed(0)} spans/s; CPU a span: writer ${perSpan((result) => result.writerCpu)}, Postgres ${perSpan((result) => result.postgresCpu)}, Redis ${perSpan((result) => result.redisCpu)}; ${(stored / jobs).toFixed(1)} spans a job; writer's peak RSS so far ${peakRssMiB(writer.pid as number).toFixed(0)} MiB`)
  }
} finally {
  for (const child of children) await stopChild(child)
  await discardQueue(queue, redis, prefix).catch(() => {})
  await queue.close()
  await redis.quit()
  await database.drop()
}
