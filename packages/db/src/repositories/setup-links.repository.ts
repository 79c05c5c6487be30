import { sql } from 'kysely'
import type { Executor } from './executor.ts'

// The setup link of an install that has no owner yet (docs/accounts.md#the-first-owner): printed
// at start, used once to make the owner of the default team. Every replica that starts before
// then may print one of its own; using any of them uses them all.

export async function createSetupLink(db: Executor, tokenHash: string): Promise<void> {
  await db.insertInto('setup_links').values({ token_hash: tokenHash }).onConflict((oc) => oc.column('token_hash').doNothing()).execute()
}

/** The link with this token hash (undefined: none), and whether it was used. */
export async function findSetupLink(db: Executor, tokenHash: string): Promise<{ used: boolean } | undefined> {
  const row = await db.selectFrom('setup_links').select('used_at').where('token_hash', '=', tokenHash).executeTakeFirst()
  return row && { used: row.used_at !== null }
}

/** Uses every setup link: the install has its owner. */
export async function useSetupLinks(db: Executor): Promise<void> {
  await db.updateTable('setup_links').set({ used_at: sql`now()` }).where('used_at', 'is', null).execute()
}
