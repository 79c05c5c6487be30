import type { TSchema } from '@sinclair/typebox'
import { BadRequestError } from '@tracewell/http'
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import { permissions } from '@tracewell/policy'

// A query parameter a route does not know is a 400 that names it, on every control-plane route:
// `?max_cost=0.01` on a route without that filter used to answer with everything, which reads as
// "the filter matched it all". A route without a querystring schema takes no parameter; a route
// opting into open parameters (GET /api/promptset's `variables.<name>`) says so in its schema
// (`additionalProperties` set to a schema). Unknown parameters are found before validation so
// that all of them are named at once, with the ones the route takes.

const EMPTY_QUERY = { type: 'object', properties: {}, additionalProperties: false } as const

interface QuerySchema {
  properties?: Record<string, TSchema>
  additionalProperties?: boolean | TSchema
}

/** Closes every route's querystring schema (added from now on) and refuses unknown parameters before validation. */
export function refuseUnknownQueryParameters(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.method === 'HEAD') return
    const schema = (route.schema ??= {})
    const declared = schema.querystring as QuerySchema | undefined
    if (declared === undefined) schema.querystring = EMPTY_QUERY
    else if (declared.additionalProperties === undefined) schema.querystring = { ...declared, additionalProperties: false }
    const query = schema.querystring as QuerySchema
    if (query.additionalProperties !== false) return
    const known = Object.keys(query.properties ?? {})
    if (namesProjectInQuery(route) && !known.includes('project_id')) {
      // A team key or a person names the project with ?project_id= (accounts/authorize.ts): such a route must take it.
      throw new Error(`${route.method} ${route.url}: a project permission needs project_id in the querystring schema`)
    }
    const knownSet = new Set(known)
    const refuseUnknown = async (request: FastifyRequest) => {
      const unknown = Object.keys((request.query ?? {}) as Record<string, unknown>).filter((name) => !knownSet.has(name))
      if (unknown.length > 0) throw new BadRequestError(unknownParametersMessage(unknown, known))
    }
    route.preValidation = [...asArray(route.preValidation), refuseUnknown]
  })
}

/** `querystring: unknown query parameter "max_cost" (this route takes: …)`. */
export function unknownParametersMessage(unknown: readonly string[], known: readonly string[]): string {
  const names = unknown.map((name) => JSON.stringify(name)).join(', ')
  const takes = known.length === 0 ? 'this route takes none' : `this route takes: ${known.join(', ')}`
  return `querystring: unknown query parameter${unknown.length === 1 ? '' : 's'} ${names} (${takes})`
}

/** A route judged by a project permission whose path does not name the project (`:projectId`). */
function namesProjectInQuery(route: RouteOptions): boolean {
  const permission = route.config?.permission
  if (typeof permission !== 'string' || !Object.hasOwn(permissions, permission)) return false
  return permissions[permission as keyof typeof permissions].on === 'project' && !route.url.includes(':projectId')
}

export function asArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return []
  return Array.isArray(value) ? value : [value]
}
