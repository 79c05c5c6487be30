import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// What the console's retention panel says about the cleanup itself (issue 46 §4, issue 48 §8):
// - retention_runs: every cleanup run that took the cleanup lock, whoever started it (the
//   schedule of `npm start`, or a call of the cleanup endpoint by a CronJob); the janitor keeps
//   the latest thousand.
// - retention_cleanup_status: one row, written by the process that serves the cleanup when it
//   starts and after each scheduled run: whether its endpoint asks for CRON_API_KEY, and its own
//   schedule and next run (none where an outside scheduler calls it).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('retention_runs')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('started_at', 'timestamptz', (col) => col.notNull())
    .addColumn('finished_at', 'timestamptz', (col) => col.notNull())
    .addColumn('trigger', 'text', (col) => col.notNull().check(sql`trigger in ('schedule', 'request')`))
    .addColumn('outcome', 'text', (col) => col.notNull().check(sql`outcome in ('complete', 'incomplete', 'failed')`))
    .addColumn('deleted_spans', 'bigint', (col) => col.notNull())
    .addColumn('dropped_partitions', 'integer', (col) => col.notNull())
    .execute()
  await db.schema
    .createTable('retention_cleanup_status')
    .addColumn('id', 'boolean', (col) => col.primaryKey().defaultTo(true).check(sql`id`))
    .addColumn('endpoint_open', 'boolean', (col) => col.notNull())
    .addColumn('schedule', 'text')
    .addColumn('next_run_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('retention_cleanup_status').execute()
  await db.schema.dropTable('retention_runs').execute()
}
