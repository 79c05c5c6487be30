import fp from 'fastify-plugin'
import { collectDefaultMetrics, Registry } from 'prom-client'
import { RequestDurationHistogram } from './request-duration.metric.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's Prometheus registry; services register their own counters in it. */
    metrics: Registry
  }
}

/**
 * Prometheus metrics at GET /metrics (prom-client: the de-facto standard, with process metrics
 * built in): process and event-loop metrics plus request durations by route and status.
 */
export const metricsPlugin = fp(
  async (app) => {
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })
    const requestDuration = new RequestDurationHistogram({ upperBounds: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registry })
    app.decorate('metrics', registry)
    app.addHook('onResponse', (request, reply, done) => {
      requestDuration.observe(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000)
      done()
    })
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      return reply.type(registry.contentType).send(await registry.metrics())
    })
  },
  { name: 'metrics', fastify: '5.x' },
)
