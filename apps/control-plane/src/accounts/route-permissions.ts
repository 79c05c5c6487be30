import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { asArray } from '../routes/strict-query.ts'
import { MessageSchema } from '@tracewell/api-schemas'
import { authorize } from './authorize.ts'

// Every control-plane route states what it needs (`config.permission`) and is judged by the one
// hook, `authorize`: a route added without either stops the app from starting, before any test
// or request could miss it. The answers the hook may give (401, 403, 404) join each route's
// declared responses, so the OpenAPI document lists them everywhere they can happen.

const authorizeAnswers = [401, 403, 404] as const

/** Checks each route registered from now on and completes its responses. */
export function requireRoutePermissions(app: FastifyInstance, withSessions: boolean): void {
  app.addHook('onRoute', (route) => {
    if (route.method === 'HEAD') return
    const permission = route.config?.permission
    if (permission === undefined) throw new Error(`${String(route.method)} ${route.url}: states no config.permission (docs/permissions.md)`)
    const schema = (route.schema ??= {}) as Record<string, unknown> & { security?: Record<string, unknown>[]; response?: Record<string, unknown> }
    // In the OpenAPI document: what the route needs (the route-walk test reads it from there).
    schema['x-permission'] = typeof permission === 'function' ? permission.choices.join(' | ') : permission
    // Open routes judge their own credential (a sign-in's password, the admin key).
    if (permission === 'anyone' || permission === 'admin-key') return
    const hooks = asArray(route.onRequest as onRequestHookHandler | onRequestHookHandler[] | undefined)
    if (!hooks.includes(authorize as onRequestHookHandler)) throw new Error(`${String(route.method)} ${route.url}: has config.permission but is not judged by onRequest: authorize`)
    const responses = (schema.response ??= {})
    for (const status of authorizeAnswers) responses[status] ??= MessageSchema
    // A signed-in person's cookie is taken wherever a key is (where SESSION_SECRET is set).
    if (withSessions && Array.isArray(schema.security) && !schema.security.some((scheme) => 'userSession' in scheme)) schema.security = [...schema.security, { userSession: [] }]
  })
}
