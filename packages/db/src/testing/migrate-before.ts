import { Migrator, type Migration } from 'kysely'
import type { Db } from '../create-db.ts'
import { migrations } from '../migrations/index.ts'

/**
 * Every migration before `migration`, applied as the previous version did (each in a transaction
 * unless it says otherwise): the database a migration under test meets.
 */
export async function migrateToBefore(db: Db, migration: string): Promise<void> {
  const names = Object.keys(migrations).filter((name) => name < migration)
  for (const [i, name] of names.entries()) {
    const upTo = Object.fromEntries(names.slice(0, i + 1).map((n) => [n, migrations[n] as Migration]))
    const disableTransactions = migrations[name]?.transactional === false
    const { error } = await new Migrator({ db, provider: { getMigrations: async () => upTo }, disableTransactions }).migrateToLatest()
    if (error) throw error
  }
}
