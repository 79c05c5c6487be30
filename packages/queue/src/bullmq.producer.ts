import { Queue } from './bullmq-classes.ts'
import type { Logger } from '@tracewell/logger'
import { GroupCommit, groupBySpans } from './group-commit.ts'
import { defaultSpanBatchJobOptions, spanBatchJobName } from './job-options.ts'
import { ProjectShares } from './project-shares.ts'
import { addTurns, priorityOfTurn } from './project-turns.ts'
import { createSpanBatchQueueConnection, isCluster, type QueueRedis, type QueueRedisTarget } from './redis-connection.ts'
import { masterNameOf, probeShard, probeWaitMs, waitForReplicas } from './replica-wait.ts'
import { ShardWritability } from './shard-writability.ts'
import { bodyBytesOf, keyedJob, newPayloadId, payloadKeyOf, spanCountOf, writePayloads, type QueuedRequest } from './span-batch.payload.ts'
import { shardIndexOf, spanBatchShards, type SpanBatchShard } from './span-batch.shards.ts'
import {
  QueueBacklogFullError,
  QueueNames,
  QueueUnavailableError,
  type AcceptedTraces,
  type SpanBatchJob,
  type SpanBatchProducer,
} from './span-batch.contract.ts'

export interface BullMqSpanBatchProducerOptions {
  /** REDIS_URL (a string or `{ url }`) or the seed nodes of REDIS_CLUSTER_NODES. */
  redis: QueueRedisTarget | string
  /** QUEUE_PREFIX. */
  prefix: string
  /** QUEUE_SHARDS (default 1). */
  shards?: number
  /** Waiting spans in the queue at or above which enqueue refuses work (QUEUE_MAX_BACKLOG). */
  maxBacklogSpans: number
  /**
   * Request-body bytes waiting in the queue at or above which enqueue refuses work
   * (QUEUE_MAX_BACKLOG_BYTES): what bounds Redis memory when requests are few but large.
   */
  maxBacklogBytes: number
  /** Most spans in one job (ENQUEUE_MAX_SPANS_PER_JOB). */
  maxSpansPerJob: number
  /**
   * How long a write's requests may wait for more to join them (ENQUEUE_LINGER_MS; default 0),
   * unless they hold LINGER_UNTIL_SPANS already.
   */
  lingerMs?: number
  /** And ends once no request has arrived for this long (ENQUEUE_LINGER_QUIET_MS; default: it does not). */
  lingerQuietMs?: number
  /** Replicas that must hold a write before enqueue resolves (QUEUE_REPLICA_ACKS; default 0). */
  replicaAcks?: number
  /** How long to wait for them (QUEUE_REPLICA_TIMEOUT_MS). */
  replicaTimeoutMs?: number
  logger?: Logger
  /** How often the backlog is measured; admission control reads the last measurement. */
  backlogRefreshMs?: number
}

/** One shard as the producer sees it: its BullMQ queue and its last measured backlog. */
interface ProducerShard extends SpanBatchShard {
  queue: Queue<SpanBatchJob>
  /** Spans and bytes per job of this producer's recent writes to the shard (to turn job counts into spans). */
  spansPerJob: number | null
  bytesPerJob: number | null
  backlogSpans: number
  backlogBytes: number
}

// A write this large goes without lingering: its jobs' round trips are already shared by hundreds
// of spans (ten-span requests under load made jobs of ~180 without a linger, and drained at 0.5 of
// COPY), and larger requests need not wait for company.
const LINGER_UNTIL_SPANS = 200

// How soon a shard that failed a write (or its replica WAIT) is tried again, by a probe of its own:
// its requests are refused at once meanwhile. A failover takes about cluster-node-timeout (seconds),
// so twice a second finds the shard back within half a second of it taking writes again.
const SHARD_PROBE_INTERVAL_MS = 500

/**
 * The queue as ingest uses it in production: BullMQ on Redis or a Redis Cluster, split into
 * shards (span-batch.shards.ts), with group commit (per write, the request bodies are stored
 * first and then their jobs are added, one job per shard and group of requests), fast failure
 * when Redis is unreachable, and admission control on the measured backlog: the whole queue's
 * (QUEUE_MAX_BACKLOG, QUEUE_MAX_BACKLOG_BYTES), and each project's share of it
 * (project-shares.ts), so that one project's flood is refused before it fills the queue for all.
 */
export function createBullMqSpanBatchProducer(options: BullMqSpanBatchProducerOptions): SpanBatchProducer {
  const target = typeof options.redis === 'string' ? { url: options.redis } : options.redis
  const connection: QueueRedis = createSpanBatchQueueConnection(target, 'producer')
  const cluster = isCluster(connection)
  // Without a listener ioredis would print every failed reconnect; one line per outage is enough.
  let reportedOutage = false
  connection.on('error', (err: Error) => {
    if (reportedOutage) return
    reportedOutage = true
    options.logger?.warn({ err: { message: err.message } }, 'queue Redis unreachable; enqueue answers 503 until it is back')
  })
  connection.on('ready', () => {
    reportedOutage = false
  })
  const unavailable = (cause?: unknown) =>
    new QueueUnavailableError(`queue unavailable: ${cause instanceof Error ? cause.message : 'Redis is not connected'}`, { cause })

  // While the very first connection is being set up, a request waits for it briefly instead of
  // getting a 503 from a process that just started; during an outage it fails at once.
  const firstConnect = new Promise<void>((resolve) => {
    connection.once('ready', resolve)
    connection.once('error', resolve) // the first attempt failed: Redis is down, say so
    setTimeout(resolve, cluster ? 3_000 : 1_000).unref()
  })
  let firstAttemptSettled = false
  void firstConnect.then(() => (firstAttemptSettled = true))
  const assertConnected = async () => {
    if (connection.status !== 'ready' && !firstAttemptSettled) await firstConnect
    if (connection.status !== 'ready') throw unavailable()
  }
  // skipWaitingForReady and skipVersionCheck: the queue must be usable the moment Redis answers,
  // even if it was down when the process started (the version check would otherwise fail once
  // and leave the queue broken for good).
  const shards: ProducerShard[] = spanBatchShards({ prefix: options.prefix, count: options.shards ?? 1, cluster }).map((shard) => {
    const queue = new Queue<SpanBatchJob>(QueueNames.spanBatches, {
      connection,
      prefix: shard.prefix,
      defaultJobOptions: defaultSpanBatchJobOptions,
      skipWaitingForReady: true,
      skipVersionCheck: true,
    })
    queue.on('error', () => {}) // reported once through the connection listener above
    return { ...shard, queue, spansPerJob: null, bytesPerJob: null, backlogSpans: 0, backlogBytes: 0 }
  })
  const shardOf = (projectId: string) => shards[shardIndexOf(projectId, shards.length)] as ProducerShard
  const shares = new ProjectShares()

  // Bytes of requests admitted but not yet acknowledged by Redis (the spans are GroupCommit's).
  let unacknowledgedBytes = 0
  const replicaAcks = options.replicaAcks ?? 0
  const replicaTimeoutMs = options.replicaTimeoutMs ?? 1_000
  const writability = new ShardWritability({
    shards,
    probe: (shard) => probeShard(connection, shard, replicaAcks, probeWaitMs(replicaTimeoutMs)),
    probeIntervalMs: SHARD_PROBE_INTERVAL_MS,
    probeTimeoutMs: probeWaitMs(replicaTimeoutMs) + 500,
  })
  /** A failed write or WAIT marks every shard on the same master: they share its replicas. */
  const shardFailed = (shard: ProducerShard, reason: string) => {
    const master = masterNameOf(connection, shard)
    for (const other of shards) if (other === shard || masterNameOf(connection, other) === master) writability.failed(other, reason)
  }
  const refusedShard = (shard: ProducerShard, reason: string) =>
    new QueueUnavailableError(`queue unavailable: shard ${shard.index} cannot take writes (${reason})`)

  // One group commit per shard, as a Kafka producer batches per partition: a shard whose master is
  // slow or gone holds up only its own requests, never the next write of the other shards.
  const writeShard = async (shard: ProducerShard, requests: QueuedRequest[]) => {
    if (connection.status !== 'ready') throw unavailable()
    const refusal = writability.reasonOf(shard)
    if (refusal !== undefined) throw refusedShard(shard, refusal)
    // One project per job, so that writers can take the projects' jobs in turns (project-turns.ts).
    const jobs = [...Map.groupBy(requests, (request) => request.projectId)].flatMap(([projectId, projectRequests]) =>
      groupBySpans(projectRequests, (request) => request.spans, options.maxSpansPerJob).map((group) => {
        const id = newPayloadId()
        return { projectId, id, group, data: keyedJob(payloadKeyOf(shard.prefix, id), group, projectId) }
      }),
    )
    const store = async () => {
      // The bodies first, so a writer never sees a job whose payload is not there yet. If adding
      // the jobs fails (or times out after Redis took them), the payloads stay until the orphan
      // sweep finds them without a job, and a job that was added after all still finds them.
      // Each project's turns are counted meanwhile: a count left by a failed add only moves
      // that project's later jobs back a little until its counter expires.
      const perProject = new Map<string, number>()
      for (const job of jobs) perProject.set(job.projectId, (perProject.get(job.projectId) ?? 0) + 1)
      const [, turns] = await Promise.all([
        writePayloads(connection, jobs.map(({ data, group }) => ({ key: data.payloadKey, bodies: group.map((request) => request.body) }))),
        addTurns(connection, shard.prefix, perProject),
      ])
      const optionsOf = (job: (typeof jobs)[number]) => {
        const priority = priorityOfTurn(turns.get(job.projectId)?.shift() ?? 1)
        return priority === undefined ? { jobId: job.id } : { jobId: job.id, priority }
      }
      // The job id is the payload id: a resent add finds the job and adds no second one. A
      // single job (every write of small requests) skips addBulk's pipeline, for the same reason
      // writePayloads does without one.
      const [single] = jobs
      if (jobs.length === 1 && single) await shard.queue.add(spanBatchJobName, single.data, optionsOf(single))
      else await shard.queue.addBulk(jobs.map((job) => ({ name: spanBatchJobName, data: job.data, opts: optionsOf(job) })))
      if (replicaAcks > 0) await waitForReplicas(connection, shard, replicaAcks, replicaTimeoutMs)
    }
    try {
      // Answered 503 as soon as the shard is known to be unwritable (a write or WAIT of another
      // shard of the same master failed, or a probe did), not when this write's commands time
      // out. The write may still land: a 503 is safe to resend, the spans are stored once.
      const stored = store()
      stored.catch(() => {})
      await Promise.race([stored, writability.nextFailure(shard)])
    } catch (error) {
      shardFailed(shard, error instanceof Error ? error.message : String(error))
      throw unavailable(error)
    }
    writability.succeeded(shard)
    const average = requests.reduce((sum, request) => sum + request.spans, 0) / jobs.length
    shard.spansPerJob = shard.spansPerJob === null ? average : shard.spansPerJob * 0.8 + average * 0.2
    const averageBytes = requests.reduce((sum, request) => sum + request.body.byteLength, 0) / jobs.length
    shard.bytesPerJob = shard.bytesPerJob === null ? averageBytes : shard.bytesPerJob * 0.8 + averageBytes * 0.2
  }
  const commits = new Map(
    shards.map((shard) => [
      shard,
      new GroupCommit<QueuedRequest>({
        sizeOf: (request) => request.spans,
        // Bounds one write's size (and so its latency); a request is never split across writes.
        maxSpansPerWrite: options.maxSpansPerJob * 16,
        lingerMs: options.lingerMs ?? 0,
        lingerUntilSpans: LINGER_UNTIL_SPANS,
        ...(options.lingerQuietMs === undefined ? {} : { lingerQuietMs: options.lingerQuietMs }),
        write: (requests) => writeShard(shard, requests),
      }),
    ]),
  )
  const unacknowledgedSpans = () => {
    let spans = 0
    for (const commit of commits.values()) spans += commit.unacknowledgedSpans
    return spans
  }

  // Each shard's backlog, measured in jobs (one cheap call per shard) and converted to spans and
  // bytes with the shard's recent job sizes. Under load, when the bound matters, group commit
  // makes jobs of every ingest replica similarly large, so the estimate is close.
  let measuring = false
  const measureShard = async (shard: ProducerShard) => {
    const counts = await shard.queue.getJobCounts('wait', 'delayed', 'prioritized')
    const jobs = Object.values(counts).reduce((sum, count) => sum + count, 0)
    if (jobs > 0 && shard.spansPerJob === null) {
      // Nothing written by this process yet (e.g. just restarted): size one waiting job instead.
      const [sample] = await shard.queue.getJobs(['wait', 'delayed', 'prioritized'], 0, 0)
      if (sample) {
        shard.spansPerJob = spanCountOf(sample.data)
        shard.bytesPerJob = bodyBytesOf(sample.data)
      }
    }
    shard.backlogSpans = Math.round(jobs * (shard.spansPerJob ?? 1))
    shard.backlogBytes = Math.round(jobs * (shard.bytesPerJob ?? 0))
  }
  const measure = async () => {
    if (measuring || connection.status !== 'ready') return
    measuring = true
    try {
      const results = await Promise.allSettled(shards.map(measureShard))
      const failed = results.find((result) => result.status === 'rejected')
      if (failed) options.logger?.warn({ err: { message: (failed.reason as Error).message } }, 'could not measure the queue backlog')
    } finally {
      measuring = false
    }
  }
  const timer = setInterval(() => void measure(), options.backlogRefreshMs ?? 250)
  timer.unref()
  void measure()
  const backlogSpans = () => shards.reduce((sum, shard) => sum + shard.backlogSpans, 0)
  const backlogBytes = () => shards.reduce((sum, shard) => sum + shard.backlogBytes, 0)

  const assertRoom = (request: QueuedRequest) => {
    const spans = backlogSpans()
    if (spans + unacknowledgedSpans() >= options.maxBacklogSpans) {
      throw new QueueBacklogFullError(`queue backlog is full (${spans} spans waiting)`)
    }
    if (backlogBytes() + unacknowledgedBytes >= options.maxBacklogBytes) {
      throw new QueueBacklogFullError(`queue backlog is full (${backlogBytes() + unacknowledgedBytes} bytes waiting)`)
    }
    const over = shares.overShare(request.projectId, spans + unacknowledgedSpans(), options.maxBacklogSpans)
    if (over) throw new QueueBacklogFullError(`project ${request.projectId} holds more than its share of the queue backlog (${over.held} of ${over.share} spans)`)
  }

  return {
    needsSpanRecords: false,
    enqueue(traces: AcceptedTraces) {
      // Only the bytes and the count wait for Redis: nothing here keeps the records alive.
      const request: QueuedRequest = { projectId: traces.projectId, body: traces.body, encoding: traces.bodyEncoding, spans: traces.spanCount }
      const shard = shardOf(request.projectId)
      const admit = () => {
        // A shard whose last write or WAIT failed is refused at once until a probe succeeds.
        const refusal = writability.reasonOf(shard)
        if (refusal !== undefined) throw refusedShard(shard, refusal)
        assertRoom(request)
        shares.admitted(request.projectId, request.spans)
        const bytes = request.body.byteLength
        unacknowledgedBytes += bytes
        return (commits.get(shard) as GroupCommit<QueuedRequest>).submit(request).finally(() => (unacknowledgedBytes -= bytes))
      }
      // Connected (the usual case): admitted at once, without waiting a turn for assertConnected.
      if (connection.status !== 'ready') return assertConnected().then(admit)
      try {
        return admit()
      } catch (error) {
        return Promise.reject(error)
      }
    },
    backlog: backlogSpans,
    backlogBytes,
    async ping() {
      try {
        await assertConnected()
      } catch (error) {
        throw unavailable(error)
      }
      // Each shard is written to (and its replicas waited for) as a request would be: a PING
      // answered by some node says nothing of the master that owns a shard's slot. Ready while
      // some shard takes writes; the others are named by unwritableShards().
      await writability.probeWritable()
      const unwritable = writability.unwritable()
      if (unwritable.length === shards.length) {
        throw new QueueUnavailableError(`queue unavailable: no shard can take writes (${unwritable.map((shard) => `shard ${shard.shard}: ${shard.reason}`).join('; ')})`)
      }
    },
    unwritableShards: () => writability.unwritable(),
    async close() {
      clearInterval(timer)
      writability.close()
      await Promise.all([...commits.values()].map((commit) => commit.flushed()))
      await Promise.all(shards.map((shard) => shard.queue.close()))
      await connection.quit().catch(() => connection.disconnect())
    },
  }
}
