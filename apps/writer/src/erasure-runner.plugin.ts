import type { WriterConfig } from '@tracewell/config'
import { startErasureRunner } from '@tracewell/write-path'
import fp from 'fastify-plugin'

export type ErasureRunnerSettings = Pick<WriterConfig, 'ERASURE_BATCH_TRACES' | 'ERASURE_POLL_MS' | 'ERASURE_RECHECK_AFTER_MS' | 'SUMMARY_FOLD_MAX_TRACES'>

/**
 * Runs erasure requests in the background (write-path's erasure-runner.ts): every writer runs the
 * loop, and its batches take the summariser's fold lock, so one batch or fold runs at a time across
 * all of them. On the event loop: a batch is a few statements, the database does the work.
 * Registered after the db plugin, so on close the loop ends before the pool does.
 */
export const erasureRunnerPlugin = fp<ErasureRunnerSettings>(
  async (app, settings) => {
    const runner = startErasureRunner({
      db: app.db,
      logger: app.log,
      pollMs: settings.ERASURE_POLL_MS,
      maxTraces: settings.ERASURE_BATCH_TRACES,
      recheckAfterMs: settings.ERASURE_RECHECK_AFTER_MS,
      foldLimits: { maxTraces: settings.SUMMARY_FOLD_MAX_TRACES, maxDeltas: 500 },
    })
    app.addHook('onClose', async () => runner.close())
  },
  { name: 'erasure-runner', fastify: '5.x', dependencies: ['db'] },
)
