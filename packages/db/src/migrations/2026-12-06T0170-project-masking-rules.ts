import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// A project's own masking rules (docs/api.md#masking), replacing the server-wide default
// (MASKING_DEFAULT_RULES). An empty list: the project masks nothing even where a default is set.
// No row: the default applies. Ingest reads the whole table every few seconds, so it is one small
// row per project that has rules of its own.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('project_masking_rules')
    .addColumn('project_id', 'text', (col) => col.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('rules', 'jsonb', (col) => col.notNull().check(sql`jsonb_typeof(rules) = 'array'`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('project_masking_rules').execute()
}
