import type { WriterConfig } from '@tracewell/config'
import { startSummariser } from '@tracewell/write-path'
import fp from 'fastify-plugin'

export type SummariserSettings = Pick<WriterConfig, 'SUMMARY_POLL_MS' | 'SUMMARY_FOLD_MAX_TRACES'>

/**
 * Runs the summariser loop inside an app, on `app.db` (write-path's summariser.ts): every writer
 * runs one, and one fold at a time runs across all of them. Registered after the db plugin, so on
 * close the loop ends before the pool does. Adds the summaries' lag to /readyz's details.
 */
export const summariserPlugin = fp<SummariserSettings>(
  async (app, settings) => {
    const summariser = startSummariser({
      db: app.db,
      logger: app.log,
      metrics: app.metrics,
      pollMs: settings.SUMMARY_POLL_MS,
      limits: { maxTraces: settings.SUMMARY_FOLD_MAX_TRACES, maxDeltas: 500 },
    })
    app.addHook('onClose', async () => summariser.close())
  },
  { name: 'summariser', fastify: '5.x', dependencies: ['db', 'metrics'] },
)
