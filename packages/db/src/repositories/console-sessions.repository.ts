import { sql } from 'kysely'
import type { Executor } from './executor.ts'

// Console sessions signed out before they expired (docs/console.md#sessions). A session is a
// signed cookie held by nobody else, so a sign-out is remembered here until the session would
// have expired, and every replica refuses it.

/**
 * Records that the session `sessionId` (valid until `expiresAt`) was signed out, and forgets
 * sign-outs of sessions that have expired since: only a sign-out adds rows, so it also keeps the
 * table to the sessions still live.
 */
export async function revokeConsoleSession(db: Executor, sessionId: string, expiresAt: Date): Promise<void> {
  await db.insertInto('console_session_revocations').values({ session_id: sessionId, expires_at: expiresAt }).onConflict((oc) => oc.column('session_id').doNothing()).execute()
  await db.deleteFrom('console_session_revocations').where('expires_at', '<', sql<Date>`now()`).execute()
}

/** Whether the session `sessionId` was signed out. */
export async function isConsoleSessionRevoked(db: Executor, sessionId: string): Promise<boolean> {
  const row = await db.selectFrom('console_session_revocations').select('session_id').where('session_id', '=', sessionId).executeTakeFirst()
  return row !== undefined
}
