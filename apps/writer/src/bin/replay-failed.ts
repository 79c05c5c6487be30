// `npm run queue:replay` — moves every failed span-batch job back to waiting, so the writer
// stores it again (e.g. after a long Postgres outage exhausted its attempts, or after a fix for
// data the writer rejected). `npm run queue:replay -- --list` only lists them, and
// `-- --wait-lists` prints where every shard's jobs wait (for autoscalers). Every shard of the
// queue (QUEUE_SHARDS), on one Redis or a Redis Cluster (REDIS_CLUSTER_NODES).
import { loadConfigOrExit, ReplayConfigSchema } from '@tracewell/config'
import {
  createSpanBatchQueueConnection,
  describeQueueRedisTarget,
  isCluster,
  QueueNames,
  queueRedisTargetOf,
  renewPayload,
  spanBatchShards,
  spanCountOf,
  Queue,
  type Job,
  type SpanBatchJob,
} from '@tracewell/queue'

const config = loadConfigOrExit(ReplayConfigSchema)
const listOnly = process.argv.includes('--list')
const pageSize = 200

const target = queueRedisTargetOf(config)
if (!target) throw new Error('queue:replay needs REDIS_URL or REDIS_CLUSTER_NODES') // packages/config requires one
if (process.argv.includes('--wait-lists')) {
  // Where every shard's waiting jobs are, for an autoscaler (KEDA's redis and redis-cluster
  // scalers): its wait list and its sorted set of later turns (project-turns.ts), computed from
  // the settings, without connecting.
  const layout = { prefix: config.QUEUE_PREFIX, count: config.QUEUE_SHARDS, cluster: 'clusterNodes' in target }
  for (const shard of spanBatchShards(layout)) {
    for (const list of ['wait', 'prioritized']) process.stdout.write(`${shard.prefix}:${QueueNames.spanBatches}:${list}\n`)
  }
  process.exit(0)
}
const connection = createSpanBatchQueueConnection(target, 'producer')
await new Promise<void>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`${describeQueueRedisTarget(target)} did not answer within 5 s`)), 5_000)
  connection.once('ready', () => {
    clearTimeout(timer)
    resolve()
  })
  connection.on('error', () => {})
}).catch((error: Error) => {
  process.stderr.write(`${error.message}\n`)
  connection.disconnect()
  process.exit(1)
})
const shards = spanBatchShards({ prefix: config.QUEUE_PREFIX, count: config.QUEUE_SHARDS, cluster: isCluster(connection) })
const queues = shards.map((shard) => new Queue<SpanBatchJob>(QueueNames.spanBatches, { connection, prefix: shard.prefix, skipMetasUpdate: true }))

// A failed job may be malformed (that may be why it failed): count what can be counted.
const spanCount = (job: Job<SpanBatchJob>) => {
  try {
    return spanCountOf(job.data)
  } catch {
    return 0
  }
}

async function list(queue: Queue<SpanBatchJob>, name: string): Promise<void> {
  const total = await queue.getFailedCount()
  process.stdout.write(`${total} failed job(s) in ${name}\n`)
  for (let start = 0; start < total; start += pageSize) {
    for (const job of await queue.getFailed(start, start + pageSize - 1)) {
      process.stdout.write(`${job.id}\tspans=${spanCount(job)}\tattempts=${job.attemptsMade}\t${job.failedReason ?? ''}\n`)
    }
  }
}

async function replay(queue: Queue<SpanBatchJob>): Promise<{ replayed: number; spans: number }> {
  // Bounded by the count at the start: a job that fails again at once is not replayed twice.
  let remaining = await queue.getFailedCount()
  let replayed = 0
  let spans = 0
  while (remaining > 0) {
    const page = await queue.getFailed(0, Math.min(pageSize, remaining) - 1)
    if (page.length === 0) break
    for (const job of page) {
      remaining--
      try {
        // Its bodies get their full TTL again before the job can wait in the queue once more.
        await renewPayload(connection, job.data)
        await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true })
        replayed++
        spans += spanCount(job)
      } catch (error) {
        process.stderr.write(`job ${job.id} not replayed: ${(error as Error).message}\n`)
      }
    }
  }
  return { replayed, spans }
}

try {
  let replayed = 0
  let spans = 0
  for (const [index, queue] of queues.entries()) {
    const name = `${shards[index]?.prefix}:${QueueNames.spanBatches}`
    if (listOnly) {
      await list(queue, name)
    } else {
      const done = await replay(queue)
      replayed += done.replayed
      spans += done.spans
    }
  }
  if (!listOnly) process.stdout.write(`Replayed ${replayed} failed job(s) (${spans} spans) back to waiting.\n`)
} finally {
  await Promise.all(queues.map((queue) => queue.close()))
  await connection.quit().catch(() => connection.disconnect())
}
