import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { buildDocsApp, type DocsApp } from './openapi/docs-app.ts'
import type { OpenApiOptions } from './openapi/security-schemes.ts'

export type { OpenApiOptions, SecuritySchemeName } from './openapi/security-schemes.ts'

// Hop-by-hop and framing headers of the docs app's answer, which this app's reply sets itself.
const notForwarded = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date'])

/**
 * Publishes the routes' TypeBox schemas as an OpenAPI document at /docs/json, with a browsable
 * page at /docs. Registered before the routes so that it sees them all.
 *
 * The OpenAPI tooling (@fastify/swagger, @fastify/swagger-ui and what they load: `yaml`, a schema
 * resolver, @fastify/static) is loaded only when /docs is first asked for: every service would
 * otherwise keep its source text in memory for its whole life, in an idle process that nobody
 * may ever ask for its document (docs/benchmarks.md#figures-behind-code-comments-2026-12-06). Until then this plugin
 * only notes the routes as they are added; the first request builds a docs app from them
 * (openapi/docs-app.ts) and every /docs request is answered by it.
 */
export const openApiPlugin = fp<OpenApiOptions>(
  async (app, options) => {
    const routes: RouteOptions[] = []
    let docsApp: Promise<DocsApp> | undefined
    const serveDocs = async (request: FastifyRequest, reply: FastifyReply) => {
      docsApp ??= buildDocsApp(options, routes)
      // GET also for this app's automatic HEAD route, which drops the body itself.
      const answer = await (await docsApp).inject({ method: 'GET', url: request.url, headers: request.headers })
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !notForwarded.has(name)) reply.header(name, value)
      reply.code(answer.statusCode)
      return answer.rawPayload.length > 0 ? reply.send(answer.rawPayload) : reply.send()
    }
    for (const url of ['/docs', '/docs/*']) app.get(url, { schema: { hide: true } }, serveDocs)
    // After the docs routes, so that only the service's own are noted. HEAD routes are Fastify's
    // automatic twins of GET routes, left out of the document as @fastify/swagger leaves them.
    app.addHook('onRoute', (route) => {
      if (route.method !== 'HEAD') routes.push(route)
    })
  },
  { name: 'openapi', fastify: '5.x' },
)
