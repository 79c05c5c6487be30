import { sql } from 'kysely'
import type { Executor } from './executor.ts'

// Share links (docs/collaboration.md#share-links): the token's SHA-256 opens one trace of one
// project, read-only, until it expires or is revoked. The token itself is never stored.

export interface TraceShareDto {
  id: string
  traceId: string
  createdBy: { userId: string | null; keyId: string | null }
  createdAt: string
  expiresAt: string | null
  revokedAt: string | null
}

interface ShareRow {
  id: string
  trace_id: string
  created_by_user_id: string | null
  created_by_key_id: string | null
  created_at: Date
  expires_at: Date | null
  revoked_at: Date | null
}

function toShareDto(row: ShareRow): TraceShareDto {
  return {
    id: row.id,
    traceId: row.trace_id,
    createdBy: { userId: row.created_by_user_id, keyId: row.created_by_key_id },
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  }
}

export async function createTraceShare(
  db: Executor,
  share: { tokenHash: string; projectId: string; traceId: string; createdByUserId: string | null; createdByKeyId: string | null; expiresAt: Date | null },
): Promise<TraceShareDto> {
  const row = await db
    .insertInto('trace_shares')
    .values({
      token_hash: share.tokenHash,
      project_id: share.projectId,
      trace_id: share.traceId,
      created_by_user_id: share.createdByUserId,
      created_by_key_id: share.createdByKeyId,
      expires_at: share.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toShareDto(row)
}

/** The project and trace a live token opens; undefined for an unknown, expired or revoked one. */
export async function findLiveTraceShare(db: Executor, tokenHash: string): Promise<{ projectId: string; traceId: string } | undefined> {
  const row = await db
    .selectFrom('trace_shares')
    .select(['project_id', 'trace_id'])
    .where('token_hash', '=', tokenHash)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
    .executeTakeFirst()
  return row && { projectId: row.project_id, traceId: row.trace_id }
}

/** A trace's share links, newest first. */
export async function listTraceShares(db: Executor, projectId: string, traceId: string): Promise<TraceShareDto[]> {
  const rows = await db.selectFrom('trace_shares').selectAll().where('project_id', '=', projectId).where('trace_id', '=', traceId).orderBy('created_at', 'desc').execute()
  return rows.map(toShareDto)
}

/** Revokes a share link; whether it was live. */
export async function revokeTraceShare(db: Executor, projectId: string, shareId: string): Promise<boolean> {
  const result = await db.updateTable('trace_shares').set({ revoked_at: sql`now()` }).where('project_id', '=', projectId).where('id', '=', shareId).where('revoked_at', 'is', null).executeTakeFirst()
  return result.numUpdatedRows > 0n
}
