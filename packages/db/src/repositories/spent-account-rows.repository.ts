import type { Executor } from './executor.ts'
import { deleteUserSessionsEndedBefore } from './user-sessions.repository.ts'

// What people's sign-ins leave behind once it can no longer be used: sessions that ended or
// expired, invitations accepted, revoked or expired, password resets used or expired. The
// janitor's run removes them a while after (docs/accounts.md#what-is-kept), so the tables hold
// what is live and what is recent, not every link ever sent.

export interface SpentAccountRows {
  sessions: number
  invitations: number
  passwordResets: number
}

/** Removes the rows that stopped being usable before `before`. */
export async function deleteSpentAccountRows(db: Executor, before: Date): Promise<SpentAccountRows> {
  const sessions = await deleteUserSessionsEndedBefore(db, before)
  const invitations = await db
    .deleteFrom('invitations')
    .where((eb) => eb.or([eb('accepted_at', '<', before), eb('revoked_at', '<', before), eb('expires_at', '<', before)]))
    .executeTakeFirst()
  const passwordResets = await db
    .deleteFrom('password_resets')
    .where((eb) => eb.or([eb('used_at', '<', before), eb('expires_at', '<', before)]))
    .executeTakeFirst()
  return { sessions, invitations: Number(invitations.numDeletedRows), passwordResets: Number(passwordResets.numDeletedRows) }
}
