import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'

export interface OpenApiOptions {
  title: string
  description: string
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
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
            cronKey: { type: 'apiKey', in: 'header', name: 'cron-api-key' },
            adminKey: { type: 'apiKey', in: 'header', name: 'x-admin-key' },
          },
        },
      },
    })
    await app.register(swaggerUi, { routePrefix: '/docs' })
  },
  { name: 'openapi', fastify: '5.x' },
)
