import { Migrator, type Migration, type MigrationResultSet } from 'kysely'
import type { AnyDb } from './create-db.ts'
import { migrations, migrationsThatPauseWriters } from './migrations/index.ts'

function migratorFor(db: AnyDb, upTo?: string): Migrator {
  const names = Object.keys(migrations).filter((name) => upTo === undefined || name <= upTo)
  const selected = Object.fromEntries(names.map((name) => [name, migrations[name] as Migration]))
  // A migration that batches its own work (a backfill) says so, and runs without a transaction.
  const disableTransactions = upTo !== undefined && migrations[upTo]?.transactional === false
  return new Migrator({ db, provider: { getMigrations: async () => selected }, disableTransactions })
}

export class MigrationError extends Error {
  override name = 'MigrationError'
}

/**
 * Applies every pending migration, each in a transaction of its own (unless it exports
 * `transactional = false`); safe to run again, and concurrently: Kysely takes a lock per step.
 */
export async function migrateToLatest(db: AnyDb, onStep?: (migration: string) => void): Promise<string[]> {
  const applied: string[] = []
  for (;;) {
    const [next] = await pendingMigrations(db)
    if (next === undefined) return applied
    onStep?.(next)
    const { error, results }: MigrationResultSet = await migratorFor(db, next).migrateToLatest()
    if (error) {
      // Another process applying the same migrations got there first: carry on from where it is.
      if (!(await pendingMigrations(db)).includes(next)) continue
      const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? next
      throw new MigrationError(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
    }
    const succeeded = (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName)
    if (succeeded.length === 0 && (await pendingMigrations(db)).includes(next)) throw new MigrationError(`migration ${next} did not run`)
    applied.push(...succeeded)
  }
}

/** The names of migrations not yet applied to this database. */
export async function pendingMigrations(db: AnyDb): Promise<string[]> {
  const all = await migratorFor(db).getMigrations()
  return all.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name)
}

/** The pending migrations that fill what they add from stored spans: the writers must not write meanwhile. */
export async function pendingMigrationsThatPauseWriters(db: AnyDb): Promise<string[]> {
  return (await pendingMigrations(db)).filter((name) => migrationsThatPauseWriters.has(name))
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
