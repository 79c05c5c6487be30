import { Queue } from 'bullmq'
import { GroupCommit, groupBySpans } from './group-commit.ts'
import { defaultSpanBatchJobOptions, spanBatchJobName } from './job-options.ts'
import { createSpanBatchQueueConnection } from './redis-connection.ts'
import { bodyBytesOf, keyedJob, newPayloadId, payloadKeyOf, spanCountOf, writePayloads, type QueuedRequest } from './span-batch.payload.ts'
import {
  QueueBacklogFullError,
  QueueNames,
  QueueUnavailableError,
  type AcceptedTraces,
  type SpanBatchJob,
  type SpanBatchProducer,
} from './span-batch.contract.ts'

export interface ProducerLogger {
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface BullMqSpanBatchProducerOptions {
  redisUrl: string
  prefix: string
  /** Waiting spans in the queue at or above which enqueue refuses work (QUEUE_MAX_BACKLOG). */
  maxBacklogSpans: number
  /**
   * Request-body bytes waiting in the queue at or above which enqueue refuses work
   * (QUEUE_MAX_BACKLOG_BYTES): what bounds Redis memory when requests are few but large.
   */
  maxBacklogBytes: number
  /** Most spans in one job (ENQUEUE_MAX_SPANS_PER_JOB). */
  maxSpansPerJob: number
  logger?: ProducerLogger
  /** How often the backlog is measured; admission control reads the last measurement. */
  backlogRefreshMs?: number
}

/**
 * The queue as ingest uses it in production: BullMQ on Redis, with group commit (per write, the
 * request bodies are stored first and then their jobs are added), fast failure when Redis
 * is unreachable, and admission control on the measured backlog. Jobs are version 2: they name
 * their bodies' Redis list (span-batch.payload.ts) and hold whole requests, up to
 * `maxSpansPerJob` spans unless one request alone is larger.
 */
export function createBullMqSpanBatchProducer(options: BullMqSpanBatchProducerOptions): SpanBatchProducer {
  const connection = createSpanBatchQueueConnection(options.redisUrl, 'producer')
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
    setTimeout(resolve, 1_000).unref()
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
  const queue = new Queue<SpanBatchJob>(QueueNames.spanBatches, {
    connection,
    prefix: options.prefix,
    defaultJobOptions: defaultSpanBatchJobOptions,
    skipWaitingForReady: true,
    skipVersionCheck: true,
  })
  queue.on('error', () => {}) // reported once through the connection listener above

  // Spans per job of this producer's recent writes: the backlog is measured in jobs (one cheap
  // call) and converted to spans with it. Under load, when the bound matters, group commit makes
  // jobs of every ingest replica similarly large, so the estimate is close.
  let spansPerJob: number | null = null
  let bytesPerJob: number | null = null
  // Bytes of requests admitted but not yet acknowledged by Redis (the spans are GroupCommit's).
  let unacknowledgedBytes = 0
  const groupCommit = new GroupCommit<QueuedRequest>({
    sizeOf: (request) => request.spans,
    // Bounds one write's size (and so its latency); a request is never split across writes.
    maxSpansPerWrite: options.maxSpansPerJob * 16,
    write: async (requests) => {
      if (connection.status !== 'ready') throw unavailable()
      const jobs = groupBySpans(requests, (request) => request.spans, options.maxSpansPerJob).map((group) => {
        const id = newPayloadId()
        return { id, group, data: keyedJob(payloadKeyOf(options.prefix, id), group) }
      })
      try {
        // The bodies first, so a writer never sees a job whose payload is not there yet. If adding
        // the jobs fails (or times out after Redis took them), the payloads stay until the orphan
        // sweep finds them without a job, and a job that was added after all still finds them.
        await writePayloads(connection, jobs.map(({ data, group }) => ({ key: data.payloadKey, bodies: group.map((request) => request.body) })))
        // The job id is the payload id: a resent add finds the job and adds no second one. A
        // single job (every write of small requests) skips addBulk's pipeline, for the same reason
        // writePayloads does without one.
        const [single] = jobs
        if (jobs.length === 1 && single) await queue.add(spanBatchJobName, single.data, { jobId: single.id })
        else await queue.addBulk(jobs.map(({ id, data }) => ({ name: spanBatchJobName, data, opts: { jobId: id } })))
      } catch (error) {
        throw unavailable(error)
      }
      const average = requests.reduce((sum, request) => sum + request.spans, 0) / jobs.length
      spansPerJob = spansPerJob === null ? average : spansPerJob * 0.8 + average * 0.2
      const averageBytes = requests.reduce((sum, request) => sum + request.body.byteLength, 0) / jobs.length
      bytesPerJob = bytesPerJob === null ? averageBytes : bytesPerJob * 0.8 + averageBytes * 0.2
    },
  })

  let measuredBacklog = 0
  let measuredBacklogBytes = 0
  let measuring = false
  const measure = async () => {
    if (measuring || connection.status !== 'ready') return
    measuring = true
    try {
      const counts = await queue.getJobCounts('wait', 'delayed', 'prioritized')
      const jobs = Object.values(counts).reduce((sum, count) => sum + count, 0)
      if (jobs > 0 && spansPerJob === null) {
        // Nothing written by this process yet (e.g. just restarted): size one waiting job instead.
        const [sample] = await queue.getJobs(['wait', 'delayed', 'prioritized'], 0, 0)
        if (sample) {
          spansPerJob = spanCountOf(sample.data)
          bytesPerJob = bodyBytesOf(sample.data)
        }
      }
      measuredBacklog = Math.round(jobs * (spansPerJob ?? 1))
      measuredBacklogBytes = Math.round(jobs * (bytesPerJob ?? 0))
    } catch (error) {
      options.logger?.warn({ err: { message: (error as Error).message } }, 'could not measure the queue backlog')
    } finally {
      measuring = false
    }
  }
  const timer = setInterval(() => void measure(), options.backlogRefreshMs ?? 250)
  timer.unref()
  void measure()

  const assertRoom = () => {
    if (measuredBacklog + groupCommit.unacknowledgedSpans >= options.maxBacklogSpans) {
      throw new QueueBacklogFullError(`queue backlog is full (${measuredBacklog} spans waiting)`)
    }
    if (measuredBacklogBytes + unacknowledgedBytes >= options.maxBacklogBytes) {
      throw new QueueBacklogFullError(`queue backlog is full (${measuredBacklogBytes + unacknowledgedBytes} bytes waiting)`)
    }
  }

  return {
    enqueue(traces: AcceptedTraces) {
      // Only the bytes and the count wait for Redis: nothing here keeps the records alive.
      const request: QueuedRequest = { projectId: traces.projectId, body: traces.body, encoding: traces.bodyEncoding, spans: traces.spans.length }
      const admit = () => {
        assertRoom()
        const bytes = request.body.byteLength
        unacknowledgedBytes += bytes
        return groupCommit.submit(request).finally(() => (unacknowledgedBytes -= bytes))
      }
      // Connected (the usual case): admitted at once, without waiting a turn for assertConnected.
      if (connection.status !== 'ready') return assertConnected().then(admit)
      try {
        return admit()
      } catch (error) {
        return Promise.reject(error)
      }
    },
    backlog: () => measuredBacklog,
    backlogBytes: () => measuredBacklogBytes,
    async ping() {
      try {
        await assertConnected()
        await connection.ping()
      } catch (error) {
        throw unavailable(error)
      }
    },
    async close() {
      clearInterval(timer)
      await groupCommit.flushed()
      await queue.close()
      await connection.quit().catch(() => connection.disconnect())
    },
  }
}
