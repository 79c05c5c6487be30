import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'

/** How a Tracewell caller proves who it is; each service's document lists the ones its routes take. */
const securitySchemes = {
  apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'a project or team key; `Authorization: Bearer <key>` is accepted too' },
  cronKey: { type: 'apiKey', in: 'header', name: 'cron-api-key' },
  adminKey: { type: 'apiKey', in: 'header', name: 'x-admin-key' },
  consoleSession: { type: 'apiKey', in: 'cookie', name: 'tw_session', description: 'the web console’s signed session cookie' },
} as const

export type SecuritySchemeName = keyof typeof securitySchemes

export interface OpenApiOptions {
  title: string
  description: string
  /** The credentials the service's routes take (OpenAPI lints a scheme no route uses). */
  securitySchemes: readonly SecuritySchemeName[]
}

/**
 * Publishes the routes' TypeBox schemas as an OpenAPI document at /docs/json, with a browsable
 * page at /docs. Registered before the routes so that it sees them all.
 */
export const openApiPlugin = fp<OpenApiOptions>(
  async (app, options) => {
    await app.register(swagger, {
      openapi: {
        info: { title: options.title, description: options.description, version: '1.0.0' },
        // Relative: the document is served by the service it describes, at whatever address that is.
        servers: [{ url: '/', description: 'the service serving this document' }],
        components: { securitySchemes: Object.fromEntries(options.securitySchemes.map((name) => [name, securitySchemes[name]])) },
      },
    })
    await app.register(swaggerUi, { routePrefix: '/docs' })
  },
  { name: 'openapi', fastify: '5.x' },
)
