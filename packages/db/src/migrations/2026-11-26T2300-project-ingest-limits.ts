import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// A project's own ingest rate limit, replacing the default of the settings
// (INGEST_RATE_LIMIT_SPANS_PER_SECOND, INGEST_RATE_LIMIT_BURST). Both columns null: the project
// has no limit even where a default is set. No row: the default applies. Ingest reads the whole
// table every few seconds, so it is one small row per project that has its own limit.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('project_ingest_limits')
    .addColumn('project_id', 'text', (col) => col.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('spans_per_second', 'integer', (col) => col.check(sql`spans_per_second > 0`))
    .addColumn('burst', 'integer', (col) => col.check(sql`burst > 0`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('project_ingest_limits_both_or_neither', sql`(spans_per_second is null) = (burst is null)`)
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('project_ingest_limits').execute()
}
