import fp from 'fastify-plugin'
import { Counter, type Registry } from 'prom-client'
import { createBullMqEvaluationQueue, createInProcessEvaluationQueue, type EvaluationQueue } from './evaluation-queue.ts'
import { processJudgment } from './evaluation.processor.ts'
import { startScheduler, type Scheduler } from './evaluation.scheduler.ts'

declare module 'fastify' {
  interface FastifyInstance {
    evaluator: { queue: EvaluationQueue; scheduler: Scheduler }
  }
}

export interface EvaluatorPluginOptions {
  /** Unset: judgments queue in process (`npm start` without REDIS_URL). */
  redisUrl?: string | undefined
  prefix: string
  encryptionKey: Buffer
  concurrency: number
  maxAttempts: number
  backoffMs: number
  pollIntervalMs: number
  quietMs: number
  lookbackMs: number
  judgeTimeoutMs: number
}

// One set of counters per registry: tests build several apps in one process.
const countersByRegistry = new WeakMap<Registry, Counter<'outcome'>>()
function judgmentCounter(registry: Registry): Counter<'outcome'> {
  let counter = countersByRegistry.get(registry)
  if (counter === undefined) {
    counter = new Counter({ name: 'tracewell_evaluator_judgments_total', help: 'judgment attempts by outcome (completed, failed)', labelNames: ['outcome'] as const, registers: [registry] })
    countersByRegistry.set(registry, counter)
  }
  return counter
}

/**
 * The evaluator worker inside an app (the evaluator service, or `npm start`): the evaluations
 * queue and its worker, and the scheduler that fills it. Registered after the db plugin, so on
 * close the scheduler stops and the running judgments finish before the pool closes.
 */
export const evaluatorPlugin = fp<EvaluatorPluginOptions>(
  async (app, options) => {
    const judgments = judgmentCounter(app.metrics)
    const processorOptions = { db: app.db, encryptionKey: options.encryptionKey, judgeTimeoutMs: options.judgeTimeoutMs }
    const judge = async (jobId: string, final: boolean) => {
      try {
        const outcome = await processJudgment(processorOptions, jobId, final)
        if (outcome === 'completed') judgments.inc({ outcome: 'completed' })
        return outcome
      } catch (error) {
        judgments.inc({ outcome: 'failed' })
        throw error
      }
    }
    const queueOptions = { concurrency: options.concurrency, maxAttempts: options.maxAttempts, backoffMs: options.backoffMs, judge, logger: app.log }
    const queue = options.redisUrl === undefined ? createInProcessEvaluationQueue(queueOptions) : createBullMqEvaluationQueue({ ...queueOptions, redisUrl: options.redisUrl, prefix: options.prefix })
    const scheduler = startScheduler({ db: app.db, queue, pollIntervalMs: options.pollIntervalMs, quietMs: options.quietMs, lookbackMs: options.lookbackMs, logger: app.log })
    app.decorate('evaluator', { queue, scheduler })
    app.addHook('onClose', async () => {
      await scheduler.close()
      await queue.close()
    })
  },
  { name: 'evaluator', fastify: '5.x', dependencies: ['db', 'metrics'] },
)
