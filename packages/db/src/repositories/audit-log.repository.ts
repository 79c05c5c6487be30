import { sql, type RawBuilder, type Selectable } from 'kysely'
import type { AuditActorKind, AuditLogTable } from '../database.ts'
import type { Executor } from './executor.ts'

export type { AuditActorKind }

// The audit log (docs/accounts.md#audit-log): one row per change made through the API, written
// by the control plane's audit hook. Rows are only ever added here; the table refuses updates and
// deletes but those of prune_audit_log (its migration says how).

export interface AuditActor {
  kind: AuditActorKind
  id: string
  /** The person's email or the key's prefix when the change was made; null: the key's prefix, looked up as the entry is written. */
  label: string | null
}

export interface NewAuditEntry {
  teamId: string
  projectId: string | null
  actor: AuditActor
  action: string
  permission: string
  resourceType: string
  resourceId: string | null
  method: string
  route: string
  params: Record<string, string>
  status: number
  ip: string | null
  userAgent: string | null
  before?: unknown
  after?: unknown
}

export interface AuditEntryDto extends Omit<NewAuditEntry, 'actor' | 'before' | 'after'> {
  id: string
  createdAt: string
  /** `name`: the person's name as it is now (null for keys, and for people since deleted). */
  actor: AuditActor & { label: string; name: string | null }
  /** The settings before and after the change, only what differed; null where the route has no settings to show. */
  before: unknown
  after: unknown
}

export interface AuditLogSearch {
  teamId: string
  limit: number
  actorId?: string | undefined
  action?: string | undefined
  resourceType?: string | undefined
  resourceId?: string | undefined
  projectId?: string | undefined
  from?: Date | undefined
  to?: Date | undefined
  /** Entries older than this one (a page's last id). */
  before?: string | undefined
}

type AuditRow = Selectable<AuditLogTable> & { actor_name: string | null }

function toAuditEntryDto(row: AuditRow): AuditEntryDto {
  return {
    id: row.id,
    createdAt: row.created_at.toISOString(),
    teamId: row.team_id,
    projectId: row.project_id,
    actor: { kind: row.actor_kind, id: row.actor_id, label: row.actor_label, name: row.actor_name },
    action: row.action,
    permission: row.permission,
    resourceType: row.resource_type,
    resourceId: row.resource_id,
    method: row.method,
    route: row.route,
    params: row.params,
    status: row.status,
    ip: row.ip,
    userAgent: row.user_agent,
    before: row.before,
    after: row.after,
  }
}

export async function recordAuditEntry(db: Executor, entry: NewAuditEntry): Promise<void> {
  await db.insertInto('audit_log').values({
    team_id: entry.teamId,
    project_id: entry.projectId,
    actor_kind: entry.actor.kind,
    actor_id: entry.actor.id,
    actor_label: entry.actor.label ?? sql<string>`coalesce((select prefix from api_keys where id = ${entry.actor.id}), ${entry.actor.id})`,
    action: entry.action,
    permission: entry.permission,
    resource_type: entry.resourceType,
    resource_id: entry.resourceId,
    method: entry.method,
    route: entry.route,
    params: JSON.stringify(entry.params),
    status: entry.status,
    ip: entry.ip,
    user_agent: entry.userAgent,
    before: entry.before === undefined ? null : JSON.stringify(entry.before),
    after: entry.after === undefined ? null : JSON.stringify(entry.after),
  }).execute()
}

/** A team's entries, newest first, a page at a time; `next` is the id to pass as `before` for the page after. */
export async function listAuditEntries(db: Executor, search: AuditLogSearch): Promise<{ entries: AuditEntryDto[]; next: string | null }> {
  const where: RawBuilder<unknown>[] = [sql`a.team_id = ${search.teamId}`]
  if (search.actorId !== undefined) where.push(sql`a.actor_id = ${search.actorId}`)
  if (search.action !== undefined) where.push(sql`a.action = ${search.action}`)
  if (search.resourceType !== undefined) where.push(sql`a.resource_type = ${search.resourceType}`)
  if (search.resourceId !== undefined) where.push(sql`a.resource_id = ${search.resourceId}`)
  if (search.projectId !== undefined) where.push(sql`a.project_id = ${search.projectId}`)
  if (search.from !== undefined) where.push(sql`a.created_at >= ${search.from}`)
  if (search.to !== undefined) where.push(sql`a.created_at < ${search.to}`)
  if (search.before !== undefined) where.push(sql`a.id < ${search.before}::bigint`)
  const { rows } = await sql<AuditRow>`
    select a.*, case when a.actor_kind = 'user' then (select u.name from users u where u.id = a.actor_id) end as actor_name
    from audit_log a where ${sql.join(where, sql` and `)}
    order by a.id desc limit ${search.limit + 1}`.execute(db)
  const page = rows.slice(0, search.limit)
  return { entries: page.map(toAuditEntryDto), next: rows.length > search.limit ? (page.at(-1)?.id ?? null) : null }
}

/**
 * Removes entries older than `keepDays` days (AUDIT_LOG_RETENTION_DAYS), through the one function
 * the table lets delete; answers how many went.
 */
export async function pruneAuditLog(db: Executor, keepDays: number): Promise<number> {
  const { rows } = await sql<{ removed: string }>`select prune_audit_log(${keepDays}::integer) as removed`.execute(db)
  return Number(rows[0]?.removed ?? 0)
}
