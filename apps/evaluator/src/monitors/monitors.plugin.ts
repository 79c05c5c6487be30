import fp from 'fastify-plugin'
import { startMonitorLoop, type MonitorLoop } from './monitor.loop.ts'

declare module 'fastify' {
  interface FastifyInstance {
    monitors: MonitorLoop
  }
}

export interface MonitorsPluginOptions {
  pollIntervalMs: number
  concurrency: number
}

/**
 * The monitors' evaluation inside an app (the evaluator service, or `npm start`), beside the
 * judgments' scheduler. Registered after the db plugin: on close it stops before the pool does.
 */
export const monitorsPlugin = fp<MonitorsPluginOptions>(
  async (app, options) => {
    const loop = startMonitorLoop({ db: app.db, pollIntervalMs: options.pollIntervalMs, concurrency: options.concurrency, logger: app.log })
    app.decorate('monitors', loop)
    app.addHook('onClose', () => loop.close())
  },
  { name: 'monitors', fastify: '5.x', dependencies: ['db'] },
)
