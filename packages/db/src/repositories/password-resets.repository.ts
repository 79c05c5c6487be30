import { sql } from 'kysely'
import { inTransaction, type Executor } from './executor.ts'

// Password reset links (docs/accounts.md#password-reset): the token's SHA-256, whose they are,
// until when. Used once; asking again replaces the person's earlier links.

export interface PasswordResetDto {
  userId: string
  email: string
  expiresAt: Date
  usedAt: Date | null
}

/**
 * Stores a reset link for `userId`, forgetting the person's earlier unused ones, unless one was
 * made within the last `minIntervalMs` (then nothing is stored: false). The person's row is locked
 * meanwhile, so that asks arriving together store one link.
 */
export async function createPasswordReset(
  db: Executor,
  reset: { tokenHash: string; userId: string; expiresAt: Date },
  minIntervalMs: number,
): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    await trx.selectFrom('users').select('id').where('id', '=', reset.userId).forUpdate().executeTakeFirst()
    const recent = await trx
      .selectFrom('password_resets')
      .select('token_hash')
      .where('user_id', '=', reset.userId)
      .where('created_at', '>', sql<Date>`now() - make_interval(secs => ${minIntervalMs / 1000})`)
      .limit(1)
      .executeTakeFirst()
    if (recent !== undefined) return false
    await trx.deleteFrom('password_resets').where('user_id', '=', reset.userId).where('used_at', 'is', null).execute()
    await trx.insertInto('password_resets').values({ token_hash: reset.tokenHash, user_id: reset.userId, expires_at: reset.expiresAt }).execute()
    return true
  })
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
