import type { ApiKey, ApiKeyKind } from '../database.ts'
import type { Executor } from './executor.ts'

/** A project key's scope (@tracewell/policy's KeyScope; this package stores, it does not judge). */
export type ApiKeyScope = 'ingest' | 'read' | 'write'

/** What a key list shows: never the secret, nor its hash. */
export interface ApiKeyDto {
  id: string
  kind: ApiKeyKind
  prefix: string
  /** null: a key made before scopes, which keeps every right it had. */
  scopes: ApiKeyScope[] | null
  /** The person who made it; null when a key, the bootstrap or an older version made it. */
  createdBy: { id: string; name: string; email: string } | null
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
}

/** What the key verifier needs to know about a presented key. */
export interface ApiKeyIdentity {
  id: string
  kind: ApiKeyKind
  teamId: string
  projectId: string | null
  revoked: boolean
  scopes: ApiKeyScope[] | null
  createdByUserId: string | null
  /** ms since the epoch; null: never expires. */
  expiresAt: number | null
}

type ApiKeyListRow = ApiKey & { creator_name: string | null; creator_email: string | null }

function toApiKeyDto(row: ApiKeyListRow): ApiKeyDto {
  return {
    id: row.id,
    kind: row.kind,
    prefix: row.prefix,
    scopes: row.scopes as ApiKeyScope[] | null,
    createdBy:
      row.created_by_user_id === null || row.creator_name === null || row.creator_email === null
        ? null
        : { id: row.created_by_user_id, name: row.creator_name, email: row.creator_email },
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  }
}

type IdentityRow = Pick<ApiKey, 'id' | 'kind' | 'team_id' | 'project_id' | 'revoked_at' | 'scopes' | 'created_by_user_id' | 'expires_at'>

function toIdentity(row: IdentityRow): ApiKeyIdentity {
  return {
    id: row.id,
    kind: row.kind,
    teamId: row.team_id,
    projectId: row.project_id,
    revoked: row.revoked_at !== null,
    scopes: row.scopes as ApiKeyScope[] | null,
    createdByUserId: row.created_by_user_id,
    expiresAt: row.expires_at?.getTime() ?? null,
  }
}

const identityColumns = ['id', 'kind', 'team_id', 'project_id', 'revoked_at', 'scopes', 'created_by_user_id', 'expires_at'] as const

export interface NewApiKeyRow {
  kind: ApiKeyKind
  teamId: string
  projectId: string | null
  keyHash: string
  prefix: string
  /** Project keys only; absent or null: every scope (what keys made by the bootstrap get). */
  scopes?: readonly ApiKeyScope[] | null
  createdByUserId?: string | null
  expiresAt?: Date | null
}

export async function insertApiKey(db: Executor, key: NewApiKeyRow): Promise<ApiKeyDto> {
  const row = await db
    .insertInto('api_keys')
    .values({
      kind: key.kind,
      team_id: key.teamId,
      project_id: key.projectId,
      key_hash: key.keyHash,
      prefix: key.prefix,
      scopes: key.scopes === undefined || key.scopes === null ? null : [...key.scopes],
      created_by_user_id: key.createdByUserId ?? null,
      expires_at: key.expiresAt ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  const creator = row.created_by_user_id === null ? undefined : await db.selectFrom('users').select(['name', 'email']).where('id', '=', row.created_by_user_id).executeTakeFirst()
  return toApiKeyDto({ ...row, creator_name: creator?.name ?? null, creator_email: creator?.email ?? null })
}

export async function findApiKeyIdentityByHash(db: Executor, keyHash: string): Promise<ApiKeyIdentity | undefined> {
  const row = await db.selectFrom('api_keys').select(identityColumns).where('key_hash', '=', keyHash).executeTakeFirst()
  return row && toIdentity(row)
}

/** The identities of the keys with these hashes, in one query; hashes of no key are absent. */
export async function findApiKeyIdentitiesByHashes(db: Executor, keyHashes: readonly string[]): Promise<Map<string, ApiKeyIdentity>> {
  if (keyHashes.length === 0) return new Map()
  const rows = await db
    .selectFrom('api_keys')
    .select([...identityColumns, 'key_hash'])
    .where('key_hash', 'in', keyHashes)
    .execute()
  return new Map(rows.map((row) => [row.key_hash, toIdentity(row)]))
}

/** The keys of one project, or the team keys of a team when `projectId` is null, with who made them. */
export async function listApiKeys(db: Executor, scope: { teamId: string; projectId: string | null }): Promise<ApiKeyDto[]> {
  let query = db
    .selectFrom('api_keys')
    .leftJoin('users', 'users.id', 'api_keys.created_by_user_id')
    .selectAll('api_keys')
    .select(['users.name as creator_name', 'users.email as creator_email'])
    .where('api_keys.team_id', '=', scope.teamId)
  query = scope.projectId === null ? query.where('api_keys.kind', '=', 'team') : query.where('api_keys.project_id', '=', scope.projectId)
  const rows = await query.orderBy('api_keys.created_at').orderBy('api_keys.id').execute()
  return rows.map(toApiKeyDto)
}

/**
 * Revokes one of the team's keys (its team keys or its projects' keys), or with `projectId` only a
 * key of that project. False if there is none.
 */
export async function revokeApiKey(db: Executor, teamId: string, keyId: string, projectId?: string): Promise<boolean> {
  let update = db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyId).where('team_id', '=', teamId).where('revoked_at', 'is', null)
  if (projectId !== undefined) update = update.where('project_id', '=', projectId)
  const result = await update.executeTakeFirst()
  if (result.numUpdatedRows > 0n) return true
  // Revoking an already revoked key is not an error; an unknown or foreign key is.
  let existing = db.selectFrom('api_keys').select('id').where('id', '=', keyId).where('team_id', '=', teamId)
  if (projectId !== undefined) existing = existing.where('project_id', '=', projectId)
  return (await existing.executeTakeFirst()) !== undefined
}

/** Records use coarsely: callers batch ids and call this at most every few seconds. */
export async function touchApiKeys(db: Executor, keyIds: readonly string[], usedAt: Date): Promise<void> {
  if (keyIds.length === 0) return
  await db.updateTable('api_keys').set({ last_used_at: usedAt }).where('id', 'in', keyIds).execute()
}

/** A key and the name of its team: what a console session stands on (looked up by the key's id). */
export interface ApiKeyOwner extends ApiKeyIdentity {
  teamName: string
}

/** The key with this id and its team's name, revoked or not; undefined when there is no such key. */
export async function findApiKeyOwnerById(db: Executor, keyId: string): Promise<ApiKeyOwner | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('teams', 'teams.id', 'api_keys.team_id')
    .select(identityColumns.map((column) => `api_keys.${column}` as const))
    .select('teams.name as team_name')
    .where('api_keys.id', '=', keyId)
    .executeTakeFirst()
  return row && { ...toIdentity(row), teamName: row.team_name }
}
