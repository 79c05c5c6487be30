import type { WriterConfig } from '@tracewell/config'
import { engineOf } from '@tracewell/db'
import { startSummariser, summariserMetrics } from '@tracewell/write-path'
import fp from 'fastify-plugin'
import { startSummariserThreadOnFirstDeltas } from './summariser-on-first-deltas.ts'

// DATABASE_URL is optional where the embedded database may be used instead (npm start).
export type SummariserSettings = Pick<WriterConfig, 'SUMMARY_POLL_MS' | 'SUMMARY_FOLD_MAX_TRACES'> & { DATABASE_URL?: string | undefined }

/**
 * Runs the summariser inside an app (write-path's summariser.ts): every writer runs one, and one
 * fold at a time runs across all of them. On Postgres it runs in a thread of its own
 * (summariser-thread.ts), started when there is first something to fold; on the embedded
 * PGlite, which one thread owns, on `app.db`. Registered after the db plugin, so on close the
 * loop ends before the pool does.
 */
export const summariserPlugin = fp<SummariserSettings>(
  async (app, settings) => {
    const pollMs = settings.SUMMARY_POLL_MS
    const limits = { maxTraces: settings.SUMMARY_FOLD_MAX_TRACES, maxDeltas: 500 }
    const databaseUrl = settings.DATABASE_URL
    const metrics = summariserMetrics(app.metrics, app.db)
    const summariser =
      engineOf.get(app.db) === 'postgres' && databaseUrl !== undefined
        ? startSummariserThreadOnFirstDeltas(app.db, { databaseUrl, pollMs, limits, logger: app.log, metrics })
        : startSummariser({ db: app.db, logger: app.log, metrics, pollMs, limits })
    app.addHook('onClose', async () => summariser.close())
  },
  { name: 'summariser', fastify: '5.x', dependencies: ['db', 'metrics'] },
)
