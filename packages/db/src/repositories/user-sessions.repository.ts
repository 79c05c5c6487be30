import { sql } from 'kysely'
import type { Executor } from './executor.ts'

// Server-side sessions of people (docs/accounts.md#sessions). Looked up on every request by the
// SHA-256 of the cookie's token; ending one is a row update, seen by every replica at once.

export interface UserSessionDto {
  id: string
  createdAt: string
  lastSeenAt: string
  expiresAt: string
  ip: string | null
  userAgent: string | null
}

export interface LiveUserSession {
  id: string
  userId: string
  createdAt: Date
  lastSeenAt: Date
  expiresAt: Date
}

export async function createUserSession(
  db: Executor,
  session: { tokenHash: string; userId: string; expiresAt: Date; ip: string | null; userAgent: string | null },
): Promise<LiveUserSession> {
  const row = await db
    .insertInto('user_sessions')
    .values({ token_hash: session.tokenHash, user_id: session.userId, expires_at: session.expiresAt, ip: session.ip, user_agent: session.userAgent })
    .returning(['id', 'user_id', 'created_at', 'last_seen_at', 'expires_at'])
    .executeTakeFirstOrThrow()
  return { id: row.id, userId: row.user_id, createdAt: row.created_at, lastSeenAt: row.last_seen_at, expiresAt: row.expires_at }
}

/**
 * The live session with this token hash: not ended, before its absolute limit, and seen within
 * `idleMs`. undefined otherwise.
 */
export async function findLiveUserSession(db: Executor, tokenHash: string, idleMs: number): Promise<LiveUserSession | undefined> {
  const row = await db
    .selectFrom('user_sessions')
    .select(['id', 'user_id', 'created_at', 'last_seen_at', 'expires_at'])
    .where('token_hash', '=', tokenHash)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .where('last_seen_at', '>', sql<Date>`now() - make_interval(secs => ${idleMs / 1000})`)
    .executeTakeFirst()
  return row && { id: row.id, userId: row.user_id, createdAt: row.created_at, lastSeenAt: row.last_seen_at, expiresAt: row.expires_at }
}

/** Records activity (the idle limit counts from it). */
export async function touchUserSession(db: Executor, sessionId: string): Promise<void> {
  await db.updateTable('user_sessions').set({ last_seen_at: sql`now()` }).where('id', '=', sessionId).where('ended_at', 'is', null).execute()
}

/** Ends one session of a user; whether it was live. */
export async function endUserSession(db: Executor, userId: string, sessionId: string): Promise<boolean> {
  const result = await db.updateTable('user_sessions').set({ ended_at: sql`now()` }).where('id', '=', sessionId).where('user_id', '=', userId).where('ended_at', 'is', null).executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Ends every session of a user but `exceptSessionId` (a password change, a removal from a team). */
export async function endUserSessions(db: Executor, userId: string, exceptSessionId?: string): Promise<number> {
  let query = db.updateTable('user_sessions').set({ ended_at: sql`now()` }).where('user_id', '=', userId).where('ended_at', 'is', null)
  if (exceptSessionId !== undefined) query = query.where('id', '!=', exceptSessionId)
  const result = await query.executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** A user's live sessions, most recently active first. */
export async function listUserSessions(db: Executor, userId: string, idleMs: number): Promise<UserSessionDto[]> {
  const rows = await db
    .selectFrom('user_sessions')
    .select(['id', 'created_at', 'last_seen_at', 'expires_at', 'ip', 'user_agent'])
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .where('last_seen_at', '>', sql<Date>`now() - make_interval(secs => ${idleMs / 1000})`)
    .orderBy('last_seen_at', 'desc')
    .execute()
  return rows.map((row) => ({
    id: row.id,
    createdAt: row.created_at.toISOString(),
    lastSeenAt: row.last_seen_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    ip: row.ip,
    userAgent: row.user_agent,
  }))
}

/** Forgets sessions that ended or expired before `before` (the janitor's sweep). */
export async function deleteUserSessionsEndedBefore(db: Executor, before: Date): Promise<number> {
  const result = await db
    .deleteFrom('user_sessions')
    .where((eb) => eb.or([eb('ended_at', '<', before), eb('expires_at', '<', before)]))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
