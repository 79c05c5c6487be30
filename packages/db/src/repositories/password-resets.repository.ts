import { sql } from 'kysely'
import type { Executor } from './executor.ts'

// Password reset links (docs/accounts.md#password-reset): the token's SHA-256, whose they are,
// until when. Used once; asking again replaces the person's earlier links.

export interface PasswordResetDto {
  userId: string
  email: string
  expiresAt: Date
  usedAt: Date | null
}

/** Stores a reset link for `userId`, forgetting the person's earlier unused ones. */
export async function createPasswordReset(db: Executor, reset: { tokenHash: string; userId: string; expiresAt: Date }): Promise<void> {
  await db.deleteFrom('password_resets').where('user_id', '=', reset.userId).where('used_at', 'is', null).execute()
  await db.insertInto('password_resets').values({ token_hash: reset.tokenHash, user_id: reset.userId, expires_at: reset.expiresAt }).execute()
}

/** The reset link with this token hash, its row locked with `forUpdate` (using it). */
export async function findPasswordReset(db: Executor, tokenHash: string, options: { forUpdate?: boolean } = {}): Promise<PasswordResetDto | undefined> {
  let query = db
    .selectFrom('password_resets')
    .innerJoin('users', 'users.id', 'password_resets.user_id')
    .select(['password_resets.user_id', 'users.email', 'password_resets.expires_at', 'password_resets.used_at'])
    .where('password_resets.token_hash', '=', tokenHash)
  if (options.forUpdate) query = query.forUpdate('password_resets')
  const row = await query.executeTakeFirst()
  return row && { userId: row.user_id, email: row.email, expiresAt: row.expires_at, usedAt: row.used_at }
}

/** Marks every unused reset link of the person used (one was, or their password changed). */
export async function usePasswordResets(db: Executor, userId: string): Promise<void> {
  await db.updateTable('password_resets').set({ used_at: sql`now()` }).where('user_id', '=', userId).where('used_at', 'is', null).execute()
}
