import type { RouteOptions } from 'fastify'
import Fastify, { type FastifyInstance } from 'fastify'
import { securitySchemes, type OpenApiOptions } from './security-schemes.ts'

/** The app that answers /docs requests for a service (openapi.plugin.ts). */
export type DocsApp = FastifyInstance

const answeredByTheService = () => {
  throw new Error('the docs app only describes routes; the service answers them')
}

/**
 * A Fastify app holding @fastify/swagger and @fastify/swagger-ui (imported here, on first use)
 * and a stand-in of each of the service's routes: the same method, URL, schema and config, so the
 * document is exactly what @fastify/swagger registered in the service itself would publish. The
 * stand-ins are never called and their schemas never compiled (no validators, no serializers):
 * the document reads the schemas as they are.
 */
export async function buildDocsApp(options: OpenApiOptions, routes: readonly RouteOptions[]): Promise<DocsApp> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui')])
  const docs = Fastify({ logger: false, exposeHeadRoutes: false })
  docs.setValidatorCompiler(() => () => true)
  docs.setSerializerCompiler(() => (data) => JSON.stringify(data))
  await docs.register(swagger, {
    openapi: {
      info: { title: options.title, description: options.description, version: '1.0.0' },
      // Relative: the document is served by the service it describes, at whatever address that is.
      servers: [{ url: '/', description: 'the service serving this document' }],
      components: { securitySchemes: Object.fromEntries(options.securitySchemes.map((name) => [name, securitySchemes[name]])) },
    },
  })
  // The page's own Content-Security-Policy: @fastify/swagger-ui's, which admits the page's inline
  // script and styles by hash, without `upgrade-insecure-requests` (it would send the page's
  // requests to https on a plain-http deployment) and with framing refused, as the console's.
  await docs.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, transformStaticCSP: docsPageCsp })
  for (const { method, url, schema, config } of routes) docs.route({ method, url, ...(schema ? { schema } : {}), ...(config ? { config } : {}), handler: answeredByTheService })
  await docs.ready()
  return docs
}

/** @fastify/swagger-ui's static CSP, for a page that may be served over plain HTTP and is never framed. */
export function docsPageCsp(header: string): string {
  return header
    .split(';')
    .map((directive) => directive.trim())
    .filter((directive) => directive !== '' && directive !== 'upgrade-insecure-requests' && !directive.startsWith('frame-ancestors'))
    .concat("frame-ancestors 'none'")
    .join('; ')
}
