import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/**
 * Headers every answer carries unless its route sets its own: `X-Content-Type-Options: nosniff`
 * (a trace attribute is user data: a browser must never sniff a JSON answer into HTML), and
 * `Cache-Control: no-store` (trace data, keys and prompts must stay out of shared and browser
 * caches, as Grafana and Sentry answer their APIs). The console's hashed assets and page set
 * their own caching, which replaces this default. A callback hook: it runs on every request,
 * ingest's included, and costs two header writes.
 */
export function installResponseHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (_request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header('x-content-type-options', 'nosniff')
    reply.header('cache-control', 'no-store')
    done()
  })
}
