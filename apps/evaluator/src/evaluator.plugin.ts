import fp from 'fastify-plugin'
import { Counter, type Registry } from 'prom-client'
import type { Outbound } from '@tracewell/outbound'
import { createBullMqEvaluationQueue, createInProcessEvaluationQueue, experimentQueueName, type EvaluationQueue, type EvaluationQueueOptions } from './evaluation-queue.ts'
import { processJudgment } from './evaluation.processor.ts'
import { processExperimentResult } from './experiment-item.processor.ts'
import { startScheduler, type Scheduler } from './evaluation.scheduler.ts'

declare module 'fastify' {
  interface FastifyInstance {
    evaluator: { queue: EvaluationQueue; experimentQueue: EvaluationQueue; scheduler: Scheduler }
  }
}

export interface EvaluatorPluginOptions {
  /** Unset: judgments queue in process (`npm start` without REDIS_URL). */
  redisUrl?: string | undefined
  prefix: string
  encryptionKey: Buffer
  /** The outbound guard every judge and model call goes through (closed by whoever made it). */
  outbound: Outbound
  concurrency: number
  maxAttempts: number
  backoffMs: number
  pollIntervalMs: number
  quietMs: number
  lookbackMs: number
  judgeTimeoutMs: number
  /** Experiment items run at once (their own queue), and how long one call may take. */
  experimentConcurrency: number
  experimentCallTimeoutMs: number
}

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
 * The evaluator worker inside an app (the evaluator service, or `npm start`): the evaluations
 * queue and its worker, and the scheduler that fills it. Registered after the db plugin, so on
 * close the scheduler stops and the running judgments finish before the pool closes.
 */
export const evaluatorPlugin = fp<EvaluatorPluginOptions>(
  async (app, options) => {
    const judgments = outcomeCounter(app.metrics, 'tracewell_evaluator_judgments_total', 'judgment attempts by outcome (completed, skipped: nothing to judge, failed)')
    const experimentItems = outcomeCounter(app.metrics, 'tracewell_evaluator_experiment_items_total', 'experiment item attempts by outcome (completed, failed)')
    const processorOptions = { db: app.db, encryptionKey: options.encryptionKey, judgeTimeoutMs: options.judgeTimeoutMs, outbound: options.outbound }
    const judge = counted(judgments, (jobId, final) => processJudgment(processorOptions, jobId, final))
    const makeQueue = (queueOptions: EvaluationQueueOptions) =>
      options.redisUrl === undefined ? createInProcessEvaluationQueue(queueOptions) : createBullMqEvaluationQueue({ ...queueOptions, redisUrl: options.redisUrl, prefix: options.prefix })
    const retries = { maxAttempts: options.maxAttempts, backoffMs: options.backoffMs, logger: app.log }
    const queue = makeQueue({ ...retries, concurrency: options.concurrency, judge })
    const experimentOptions = { db: app.db, encryptionKey: options.encryptionKey, callTimeoutMs: options.experimentCallTimeoutMs, outbound: options.outbound, judge: (ids: string[]) => queue.add(ids) }
    const experimentQueue = makeQueue({
      ...retries,
      queueName: experimentQueueName,
      jobKind: 'experiment item',
      concurrency: options.experimentConcurrency,
      judge: counted(experimentItems, (resultId, final) => processExperimentResult(experimentOptions, resultId, final)),
    })
    const scheduler = startScheduler({ db: app.db, queue, experimentQueue, pollIntervalMs: options.pollIntervalMs, quietMs: options.quietMs, lookbackMs: options.lookbackMs, logger: app.log })
    app.decorate('evaluator', { queue, experimentQueue, scheduler })
    app.addHook('onClose', async () => {
      await scheduler.close()
      // Experiment items queue judgments: they stop first.
      await experimentQueue.close()
      await queue.close()
    })
  },
  { name: 'evaluator', fastify: '5.x', dependencies: ['db', 'metrics'] },
)
