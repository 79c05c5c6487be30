import fp from 'fastify-plugin'
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client'

type Observer = { observe(value: number): void }

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
    const requestDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    })
    app.decorate('metrics', registry)
    // One labelled child per (method, route, status), looked up by a flat key: prom-client
    // otherwise validates and hashes the label object on every request, a measurable share of
    // a cheap request's cost. The key space is bounded by the routes and statuses that exist.
    const children = new Map<string, Observer>()
    app.addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url ?? 'unmatched'
      const key = `${request.method} ${reply.statusCode} ${route}`
      let child = children.get(key)
      if (!child) {
        child = requestDuration.labels({ method: request.method, route, status: String(reply.statusCode) })
        children.set(key, child)
      }
      child.observe(reply.elapsedTime / 1000)
      done()
    })
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      return reply.type(registry.contentType).send(await registry.metrics())
    })
  },
  { name: 'metrics', fastify: '5.x' },
)
