import { ensureDayPartitions } from '@tracewell/db'
import fp from 'fastify-plugin'

/** How often a writer makes the day partitions ahead of need; the janitor does it on every run too. */
export const PARTITION_CHECK_INTERVAL_MS = 60 * 60 * 1000
/** After a failed attempt (Postgres down), the next comes sooner. */
const RETRY_INTERVAL_MS = 60 * 1000

/**
 * Keeps the day partitions of spans and of the summaries made from yesterday to three days ahead
 * (docs/operations.md#partitions): at start and every hour, so that a writer that runs alone for
 * days still stores each day's rows in a partition of their own. A row whose day has none is
 * still stored (the default partition), so a missed check costs only a cheaper expiry later.
 */
export const dayPartitionsPlugin = fp(
  async (app) => {
    let timer: NodeJS.Timeout | undefined
    let closed = false
    const check = async () => {
      let next = PARTITION_CHECK_INTERVAL_MS
      try {
        const made = await ensureDayPartitions(app.db)
        if (made.length > 0) app.log.info({ partitions: made }, 'made day partitions ahead of need')
      } catch (error) {
        app.log.warn({ err: error }, 'could not make the day partitions ahead of need; trying again in a minute')
        next = RETRY_INTERVAL_MS
      }
      if (!closed) timer = setTimeout(() => void check(), next).unref()
    }
    app.addHook('onReady', async () => {
      await check()
    })
    app.addHook('onClose', async () => {
      closed = true
      clearTimeout(timer)
    })
  },
  { name: 'day-partitions', fastify: '5.x', dependencies: ['db'] },
)
