import fp from 'fastify-plugin'
import { Counter, type Registry } from 'prom-client'
import type { Outbound } from '@tracewell/outbound'
import { LlmCallError } from '@tracewell/llm-calls'
import { createBullMqProjectJobQueue, createInProcessProjectJobQueue, type ProjectJobQueue, type ProjectJobQueueOptions, type QueueRedisTarget } from '@tracewell/queue'
import { processJudgment } from './judgment.processor.ts'
import { processExperimentResult } from './experiment-item.processor.ts'
import { startScheduler, type Scheduler } from './judgment.scheduler.ts'

declare module 'fastify' {
  interface FastifyInstance {
    evaluator: {
      queue: ProjectJobQueue
      experimentQueue: ProjectJobQueue
      scheduler: Scheduler
      /** Whether both queues take jobs now (for /readyz): on a cluster each has a slot, and a master, of its own. */
      ping(): Promise<void>
    }
  }
}

export interface EvaluatorPluginOptions {
  /** REDIS_URL or REDIS_CLUSTER_NODES; unset: judgments queue in process (`npm start` without either). */
  redis?: QueueRedisTarget | undefined
  prefix: string
  encryptionKey: Buffer
  /** The outbound guard every judge and model call goes through (closed by whoever made it). */
  outbound: Outbound
  concurrency: number
  maxAttempts: number
  backoffMs: number
  pollIntervalMs: number
  /** EVALUATOR_STATEMENT_TIMEOUT_MS: the look's statements' Postgres statement timeout. */
  statementTimeoutMs: number
  quietMs: number
  lookbackMs: number
  judgeTimeoutMs: number
  /** Experiment items run at once (their own queue, shared between projects the same way), and how long one call may take. */
  experimentConcurrency: number
  experimentCallTimeoutMs: number
}

/** The judgments' queue, beside the span queue (its BullMQ name: jobs queued by earlier releases still run). */
export const judgmentQueueName = 'evaluations'
/** Experiment items: a queue of their own, with its own concurrency. */
export const experimentQueueName = 'experiment-items'

// One set of counters per registry: tests build several apps in one process.
const countersByRegistry = new WeakMap<Registry, Map<string, Counter<'outcome'>>>()
function outcomeCounter(registry: Registry, name: string, help: string): Counter<'outcome'> {
  let counters = countersByRegistry.get(registry)
  if (counters === undefined) countersByRegistry.set(registry, (counters = new Map()))
  let counter = counters.get(name)
  if (counter === undefined) {
    counter = new Counter({ name, help, labelNames: ['outcome'] as const, registers: [registry] })
    counters.set(name, counter)
  }
  return counter
}

/** A job runner that counts its outcomes. */
function counted(counter: Counter<'outcome'>, run: (jobId: string, final: boolean) => Promise<'completed' | 'skipped' | 'gone'>) {
  return async (jobId: string, final: boolean) => {
    try {
      const outcome = await run(jobId, final)
      if (outcome !== 'gone') counter.inc({ outcome })
      return outcome
    } catch (error) {
      counter.inc({ outcome: 'failed' })
      throw error
    }
  }
}

/**
 * The evaluator worker inside an app (the evaluator service, or `npm start`): the processors of
 * the queue kit's two job queues (judgments, experiment items; packages/queue), and the scheduler
 * that fills them. Registered after the db plugin, so on close the scheduler stops and the running
 * judgments finish before the pool closes.
 */
export const evaluatorPlugin = fp<EvaluatorPluginOptions>(
  async (app, options) => {
    const judgments = outcomeCounter(app.metrics, 'tracewell_evaluator_judgments_total', 'judgment attempts by outcome (completed, skipped: nothing to judge, failed)')
    const experimentItems = outcomeCounter(app.metrics, 'tracewell_evaluator_experiment_items_total', 'experiment item attempts by outcome (completed, failed)')
    const processorOptions = { db: app.db, encryptionKey: options.encryptionKey, judgeTimeoutMs: options.judgeTimeoutMs, outbound: options.outbound }
    const judge = counted(judgments, (jobId, final) => processJudgment(processorOptions, jobId, final))
    const makeQueue = (queueOptions: ProjectJobQueueOptions) =>
      options.redis === undefined ? createInProcessProjectJobQueue(queueOptions) : createBullMqProjectJobQueue({ ...queueOptions, redis: options.redis, prefix: options.prefix })
    // A judge error no retry can help (a refused key, a model that does not exist) fails the job at once.
    const common = { maxAttempts: options.maxAttempts, backoffMs: options.backoffMs, logger: app.log, isPermanent: (error: unknown) => error instanceof LlmCallError && !error.retryable }
    const queue = makeQueue({ ...common, name: judgmentQueueName, jobKind: 'judgment', concurrency: options.concurrency, process: judge })
    const experimentOptions = {
      db: app.db,
      encryptionKey: options.encryptionKey,
      callTimeoutMs: options.experimentCallTimeoutMs,
      outbound: options.outbound,
      judge: (projectId: string, ids: string[]) => queue.add(ids.map((jobId) => ({ jobId, projectId }))),
    }
    const experimentQueue = makeQueue({
      ...common,
      name: experimentQueueName,
      jobKind: 'experiment item',
      concurrency: options.experimentConcurrency,
      process: counted(experimentItems, (resultId, final) => processExperimentResult(experimentOptions, resultId, final)),
    })
    const scheduler = startScheduler({ db: app.db, queue, experimentQueue, pollIntervalMs: options.pollIntervalMs, statementTimeoutMs: options.statementTimeoutMs, quietMs: options.quietMs, lookbackMs: options.lookbackMs, logger: app.log })
    const ping = async () => void (await Promise.all([queue.ping(), experimentQueue.ping()]))
    app.decorate('evaluator', { queue, experimentQueue, scheduler, ping })
    app.addHook('onClose', async () => {
      await scheduler.close()
      // Experiment items queue judgments: they stop first.
      await experimentQueue.close()
      await queue.close()
    })
  },
  { name: 'evaluator', fastify: '5.x', dependencies: ['db', 'metrics'] },
)
