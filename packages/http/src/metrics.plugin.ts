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
    // Gauges named like counters, which `promtool check metrics` rejects; each is the sum of the
    // labelled gauge of the same name without `_total` (nodejs_active_handles{type} and so on).
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name)
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
