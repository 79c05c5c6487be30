import type { ApiKey, ApiKeyKind } from '../database.ts'
import type { Executor } from './executor.ts'

/** What a key list shows: never the secret, nor its hash. */
export interface ApiKeyDto {
  id: string
  kind: ApiKeyKind
  prefix: string
  createdAt: string
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
}

function toApiKeyDto(row: ApiKey): ApiKeyDto {
  return {
    id: row.id,
    kind: row.kind,
    prefix: row.prefix,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  }
}

export async function insertApiKey(
  db: Executor,
  key: { kind: ApiKeyKind; teamId: string; projectId: string | null; keyHash: string; prefix: string },
): Promise<ApiKeyDto> {
  const row = await db
    .insertInto('api_keys')
    .values({ kind: key.kind, team_id: key.teamId, project_id: key.projectId, key_hash: key.keyHash, prefix: key.prefix })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toApiKeyDto(row)
}

export async function findApiKeyIdentityByHash(db: Executor, keyHash: string): Promise<ApiKeyIdentity | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'kind', 'team_id', 'project_id', 'revoked_at'])
    .where('key_hash', '=', keyHash)
    .executeTakeFirst()
  return row && { id: row.id, kind: row.kind, teamId: row.team_id, projectId: row.project_id, revoked: row.revoked_at !== null }
}

/** The identities of the keys with these hashes, in one query; hashes of no key are absent. */
export async function findApiKeyIdentitiesByHashes(db: Executor, keyHashes: readonly string[]): Promise<Map<string, ApiKeyIdentity>> {
  if (keyHashes.length === 0) return new Map()
  const rows = await db
    .selectFrom('api_keys')
    .select(['id', 'kind', 'team_id', 'project_id', 'revoked_at', 'key_hash'])
    .where('key_hash', 'in', keyHashes)
    .execute()
  return new Map(rows.map((row) => [row.key_hash, { id: row.id, kind: row.kind, teamId: row.team_id, projectId: row.project_id, revoked: row.revoked_at !== null }]))
}

/** The keys of one project, or the team keys of a team when `projectId` is null. */
export async function listApiKeys(db: Executor, scope: { teamId: string; projectId: string | null }): Promise<ApiKeyDto[]> {
  let query = db.selectFrom('api_keys').selectAll().where('team_id', '=', scope.teamId)
  query = scope.projectId === null ? query.where('kind', '=', 'team') : query.where('project_id', '=', scope.projectId)
  const rows = await query.orderBy('created_at').orderBy('id').execute()
  return rows.map(toApiKeyDto)
}

/** Revokes one of the team's keys (its team keys or its projects' keys). False if there is none. */
export async function revokeApiKey(db: Executor, teamId: string, keyId: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('id', '=', keyId)
    .where('team_id', '=', teamId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  if (result.numUpdatedRows > 0n) return true
  // Revoking an already revoked key is not an error; an unknown or foreign key is.
  const existing = await db.selectFrom('api_keys').select('id').where('id', '=', keyId).where('team_id', '=', teamId).executeTakeFirst()
  return existing !== undefined
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
    .select(['api_keys.id', 'api_keys.kind', 'api_keys.team_id', 'api_keys.project_id', 'api_keys.revoked_at', 'teams.name as team_name'])
    .where('api_keys.id', '=', keyId)
    .executeTakeFirst()
  return row && { id: row.id, kind: row.kind, teamId: row.team_id, projectId: row.project_id, revoked: row.revoked_at !== null, teamName: row.team_name }
}
