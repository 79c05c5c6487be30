import type { Permission } from '@tracewell/policy'
import type { FastifyRequest } from 'fastify'
import { accessOf, type RouteAccess } from '../accounts/authorize.ts'

// Which requests the audit log records (docs/accounts.md#audit-log), decided from what every
// route states already, its `config.permission`, and its method: a route added later is recorded
// without a line of its own.
//
// - Reads (GET, HEAD, OPTIONS, and any route whose permission is a `:read`) are not changes.
// - Every other permission is recorded, but for the work itself: traces and feedback the SDKs send,
//   scores and annotations, comments, annotation-queue items, private views, playground runs.
//   Each of those rows already names its author, and they come at the rate of traces; the log is
//   for what changes how the team and its projects work.
// - Settings (the `settings:write`, `sso:write` and `members:manage` routes) are also recorded
//   with what they were before and after (settings-snapshot.ts).

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * false: this route's changes are not recorded though its permission would be. true: a route
     * open to anyone or any signed-in person (accepting an invitation) is recorded, once its
     * handler has set `request.teamId` and `request.principal`.
     */
    audit?: boolean
  }
}

const reads = new Set(['GET', 'HEAD', 'OPTIONS'])

const theWorkItself: ReadonlySet<Permission> = new Set<Permission>([
  'traces:ingest', 'feedback:write', 'scores:write', 'comments:write', 'annotation-queues:write', 'views:write', 'playground:run',
])

const withSettings: ReadonlySet<Permission> = new Set<Permission>(['settings:write', 'sso:write', 'members:manage'])

export interface AuditedChange {
  /** The route's permission, or 'anyone' / 'signed-in' for an open route that asked to be recorded. */
  permission: RouteAccess
  /** What the entry says was changed: the permission's resource (settings, prompts, members…). */
  resourceType: string
  /** Whether the entry carries the settings before and after. */
  snapshot: boolean
}

/** What the audit log records of this request, or null when it records nothing. */
export function auditedChange(request: FastifyRequest): AuditedChange | null {
  if (reads.has(request.method)) return null
  const config = request.routeOptions.config
  if (config.permission === undefined || config.audit === false) return null
  // The permission the request was admitted by (a route may choose one per request).
  const access = request.permission ?? accessOf(request)
  if (access === 'anyone' || access === 'signed-in' || access === 'admin-key') {
    return config.audit === true ? { permission: access, resourceType: firstSegmentOf(request.routeOptions.url ?? ''), snapshot: false } : null
  }
  const [resource = access, action] = access.split(':')
  if (action === 'read' || theWorkItself.has(access)) return null
  return { permission: access, resourceType: resource, snapshot: withSettings.has(access) }
}

/** `/api/invitations/:token/accept` → `invitations`. */
function firstSegmentOf(url: string): string {
  return url.split('/').filter((segment) => segment !== '' && segment !== 'api')[0] ?? url
}
