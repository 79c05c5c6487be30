import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema } from './common.schemas.ts'

// The shapes of a team's audit log (docs/api.md#audit-log).

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

export const AuditEntrySchema = Type.Object({
  id: Type.String({ description: 'increasing: a later entry has a larger id' }),
  createdAt: IsoDateSchema,
  teamId: Type.String(),
  projectId: Nullable(Type.String()),
  actor: Type.Object({
    kind: Type.Union([Type.Literal('user'), Type.Literal('team-key'), Type.Literal('project-key')]),
    id: Type.String({ description: 'the person’s or the key’s id' }),
    label: Type.String({ description: 'the person’s email, or the key’s prefix, when the change was made' }),
    name: Nullable(Type.String({ description: 'the person’s name now; null for keys and people since deleted' })),
  }),
  action: Type.String({ description: 'the operationId of the route called (setRetentionPolicy, createModelPrice…)' }),
  permission: Type.String({ description: 'the permission the route needs (docs/permissions.md)' }),
  resourceType: Type.String({ description: 'the permission’s resource: settings, prompts, members, keys…' }),
  resourceId: Nullable(Type.String({ description: 'the thing changed: the route’s last path parameter, or the id of what a POST made' })),
  method: Type.String(),
  route: Type.String({ description: 'the path template, /api/projects/:projectId/retention' }),
  params: Type.Record(Type.String(), Type.String(), { description: 'the path parameters’ values (those named like secrets redacted)' }),
  status: Type.Integer({ description: 'the HTTP status answered' }),
  ip: Nullable(Type.String({ description: 'the address the request came from (X-Forwarded-For where TRUST_PROXY believes it)' })),
  userAgent: Nullable(Type.String()),
  before: Type.Unknown({ description: 'settings routes: what differed, as the API showed it before the change; else null' }),
  after: Type.Unknown({ description: 'settings routes: what differed, as the API shows it after the change; else null' }),
})
export type AuditEntry = Static<typeof AuditEntrySchema>

export const AuditLogQuerySchema = Type.Object({
  actor: Type.Optional(Type.String({ maxLength: 200, description: 'a person’s or a key’s id' })),
  action: Type.Optional(Type.String({ maxLength: 200, description: 'an operationId, such as setRetentionPolicy' })),
  resource_type: Type.Optional(Type.String({ maxLength: 100, description: 'settings, prompts, members, keys…' })),
  resource_id: Type.Optional(Type.String({ maxLength: 300 })),
  project_id: Type.Optional(Type.String({ maxLength: 64, description: 'entries about this project' })),
  from: Type.Optional(Type.String({ description: 'ISO 8601, inclusive' })),
  to: Type.Optional(Type.String({ description: 'ISO 8601, exclusive' })),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  cursor: Type.Optional(Type.String({ maxLength: 20, description: 'nextCursor of the previous page' })),
})
export type AuditLogQuery = Static<typeof AuditLogQuerySchema>

export const AuditLogPageSchema = Type.Object({ entries: Type.Array(AuditEntrySchema), nextCursor: Nullable(Type.String()) })
export type AuditLogPage = Static<typeof AuditLogPageSchema>
