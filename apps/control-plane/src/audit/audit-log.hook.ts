import { recordAuditEntry, type AuditActor, type NewAuditEntry } from '@tracewell/db'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Principal } from '../accounts/principal.ts'
import { auditedChange, type AuditedChange } from './audited-changes.ts'
import { changedParts } from './changed-parts.ts'
import { isSecretName, redactedValue } from './secret-fields.ts'
import { settingsSnapshot } from './settings-snapshot.ts'

// The audit log's one writer (docs/accounts.md#audit-log): hooks on every control-plane route,
// judging from the route's `config.permission`, method and params what was changed
// (audited-changes.ts), by whom (`request.principal`, set by authorize), in which team and
// project, from which address. No handler writes an entry.
//
// Written in onSend, before the answer leaves: whoever made the change finds it in the log on
// their very next request. Only changes that succeeded (below 400) are recorded. An entry that
// cannot be written does not undo the change it describes (that is committed already): it is
// logged as an error instead.

declare module 'fastify' {
  interface FastifyRequest {
    /** The settings before the change, for settings routes (settings-snapshot.ts). */
    auditBefore: unknown
  }
}

/** An entry's before or after larger than this is kept as `{truncated: true}` (a list of thousands). */
const maxSnapshotChars = 64 * 1024

export function installAuditLog(app: FastifyInstance): void {
  app.decorateRequest('auditBefore', null)
  app.addHook('preHandler', async (request) => {
    if (auditedChange(request)?.snapshot) request.auditBefore = await snapshotOrNull(request)
  })
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode >= 400) return payload
    const change = auditedChange(request)
    if (change === null) return payload
    try {
      const entry = await entryOf(request, reply, payload, change)
      if (entry === null) request.log.warn({ route: request.routeOptions.url }, 'a recorded change names no team or no caller: not in the audit log')
      else await recordAuditEntry(app.db, entry)
    } catch (error) {
      request.log.error({ err: error }, 'audit log entry could not be written')
    }
    return payload
  })
}

async function entryOf(request: FastifyRequest, reply: FastifyReply, payload: unknown, change: AuditedChange): Promise<NewAuditEntry | null> {
  const principal = request.principal
  if (request.teamId === null || principal === null) return null
  const route = request.routeOptions.url ?? request.url
  const params = paramsOf(request)
  const userAgent = request.headers['user-agent']
  const entry: NewAuditEntry = {
    teamId: request.teamId,
    projectId: request.controlPlaneProjectId ?? null,
    actor: actorOf(principal),
    action: request.routeOptions.schema?.operationId ?? `${request.method} ${route}`,
    permission: change.permission,
    resourceType: change.resourceType,
    resourceId: resourceIdOf(request, route, params, payload),
    method: request.method,
    route,
    params,
    status: reply.statusCode,
    ip: request.ip,
    userAgent: typeof userAgent === 'string' ? userAgent.slice(0, 512) : null,
  }
  if (!change.snapshot) return entry
  const settings = changedParts(request.auditBefore, await snapshotOrNull(request))
  return { ...entry, before: bounded(settings?.before ?? null), after: bounded(settings?.after ?? null) }
}

/** The settings now, or null when they could not be read: a snapshot never stops the change it describes. */
async function snapshotOrNull(request: FastifyRequest): Promise<unknown> {
  try {
    return await settingsSnapshot(request)
  } catch (error) {
    request.log.warn({ err: error }, 'settings snapshot for the audit log failed')
    return null
  }
}

function actorOf(principal: Principal): AuditActor {
  if (principal.kind === 'user') return { kind: 'user', id: principal.user.id, label: principal.user.email }
  // A key's label is its prefix, looked up as the entry is written (recordAuditEntry).
  return { kind: principal.key.kind === 'team' ? 'team-key' : 'project-key', id: principal.key.id, label: null }
}

function paramsOf(request: FastifyRequest): Record<string, string> {
  const params = (request.params ?? {}) as Record<string, unknown>
  return Object.fromEntries(Object.entries(params).map(([name, value]) => [name, isSecretName(name) ? redactedValue : String(value)]))
}

/**
 * What was changed: the route's last path parameter when the path ends with one
 * (…/model-prices/:priceId), else the `id` a POST answered with (the thing it made), else the
 * last path parameter before (the project whose retention was set).
 */
function resourceIdOf(request: FastifyRequest, route: string, params: Record<string, string>, payload: unknown): string | null {
  const names = [...route.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1] as string)
  const last = names.at(-1)
  const lastValue = last === undefined ? null : (params[last] ?? null)
  if (last !== undefined && route.endsWith(`:${last}`)) return lastValue
  if (request.method === 'POST' && typeof payload === 'string') {
    const made = idIn(payload)
    if (made !== null) return made
  }
  return lastValue
}

function idIn(payload: string): string | null {
  try {
    const body: unknown = JSON.parse(payload)
    const id = body !== null && typeof body === 'object' ? (body as { id?: unknown }).id : undefined
    return typeof id === 'string' || typeof id === 'number' ? String(id) : null
  } catch {
    return null
  }
}

function bounded(value: unknown): unknown {
  return JSON.stringify(value).length > maxSnapshotChars ? { truncated: true } : value
}
