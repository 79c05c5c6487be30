import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { listAuditEntries } from '@tracewell/db'
import { BadRequestError } from '@tracewell/http'
import { authorize } from '../accounts/authorize.ts'
import { AuditLogPageSchema, AuditLogQuerySchema, errorResponses, IdSchema } from '@tracewell/api-schemas'
import { timeWindow } from './query-bounds.ts'

// GET /api/teams/:teamId/audit-log (docs/api.md#audit-log): the team's audit log, newest first,
// for its admins and owners (and team keys). The entries are written by the audit hook
// (audit/audit-log.hook.ts), never by a route.

/** The cursor is the last entry's id: a positive integer as text. */
function cursorOf(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined
  if (!/^[1-9][0-9]{0,18}$/.test(raw)) throw new BadRequestError('querystring/cursor: not a nextCursor returned by this API')
  return raw
}

export const auditLogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/teams/:teamId/audit-log',
    {
      onRequest: authorize,
      config: { permission: 'audit-log:read' },
      schema: {
        operationId: 'listAuditLog',
        summary: 'The team’s audit log, newest first, filtered by actor, action, resource, project and time',
        description: 'Every change made through the API or the console: who, what, when, from which address; settings with what they were before and after. Kept AUDIT_LOG_RETENTION_DAYS (365) days.',
        tags: ['audit log'],
        security: [{ apiKey: [] }],
        params: Type.Object({ teamId: IdSchema }),
        querystring: AuditLogQuerySchema,
        response: { 200: AuditLogPageSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const query = request.query
      const page = await listAuditEntries(app.db, {
        teamId: request.params.teamId,
        limit: query.limit,
        actorId: query.actor,
        action: query.action,
        resourceType: query.resource_type,
        resourceId: query.resource_id,
        projectId: query.project_id,
        ...timeWindow(query),
        before: cursorOf(query.cursor),
      })
      return { entries: page.entries, nextCursor: page.next }
    },
  )
}
