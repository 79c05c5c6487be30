import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

const fastifysOwn = SerializerSelector()

/**
 * Fastify's own response serializers (fast-json-stringify, compiled from the routes' response
 * schemas), each compiled by its first reply instead of at start-up: a control plane's ~200 were
 * generated code an idle process held (docs/benchmarks.md#at-rest). That reply pays the compile,
 * once; every later one calls the compiled function as before.
 */
export const serializersOnFirstUse: FastifyServerOptions['schemaController'] = {
  compilersFactory: {
    buildSerializer: (externalSchemas, options) => {
      const compile = fastifysOwn(externalSchemas, options)
      return (route) => {
        let serialize: ((data: unknown) => string) | undefined
        return (data) => (serialize ??= compile(route))(data)
      }
    },
  },
}
