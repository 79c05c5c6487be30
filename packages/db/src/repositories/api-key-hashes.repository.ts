import type { Executor } from './executor.ts'

/**
 * The stored hash of one of a team's keys, so that the process revoking it can drop it from its
 * key cache at once (other processes wait for their cache TTL).
 */
export async function findTeamApiKeyHash(db: Executor, teamId: string, keyId: string): Promise<string | undefined> {
  const row = await db.selectFrom('api_keys').select('key_hash').where('id', '=', keyId).where('team_id', '=', teamId).executeTakeFirst()
  return row?.key_hash
}
