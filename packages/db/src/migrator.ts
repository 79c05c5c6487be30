import { Migrator, type MigrationResultSet } from 'kysely'
import type { AnyDb } from './create-db.ts'
import { migrations } from './migrations/index.ts'

function migratorFor(db: AnyDb): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } })
}

export class MigrationError extends Error {
  override name = 'MigrationError'
}

/** Applies every pending migration; safe to run again (and concurrently: Kysely takes a lock). */
export async function migrateToLatest(db: AnyDb): Promise<string[]> {
  const { error, results }: MigrationResultSet = await migratorFor(db).migrateToLatest()
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown'
    throw new MigrationError(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
  }
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName)
}

/** The names of migrations not yet applied to this database. */
export async function pendingMigrations(db: AnyDb): Promise<string[]> {
  const all = await migratorFor(db).getMigrations()
  return all.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name)
}

/** Services refuse to start on a database that is behind (docs/operations.md#migrations). */
export async function assertSchemaIsCurrent(db: AnyDb): Promise<void> {
  const pending = await pendingMigrations(db)
  if (pending.length > 0) {
    throw new MigrationError(
      `the database is behind: ${pending.length} migration(s) not applied (${pending.join(', ')}); run \`npm run migrate\``,
    )
  }
}
