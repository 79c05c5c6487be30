import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
// Later schema changes are new migration files.
//
// Ids are text (UUIDs by default) so that ids carried over from Langtrace, which are not UUIDs,
// can be used verbatim (INIT_PROJECT_ID).
//
// Why `spans` is not partitioned by time: (project_id, trace_id, span_id) is its primary
// key, because that is what makes storage idempotent (a resent span never makes a second row).
// Postgres requires the partition key in every unique constraint of a partitioned table, so
// partitioning by start_time would turn the key into (project, trace, span, start_time) and a
// resent span with a corrected start time would be stored twice. Retention is per project with
// per-project cutoffs, so a time partition could only be dropped when it is older than every
// project's cutoff anyway. We keep one table, and the janitor deletes in bounded batches through
// the (project_id, start_time) index; see docs/operations.md#scaling for when to partition.
//
// No foreign key from spans to projects: a writer batch must never fail because a project was
// deleted while its spans were in flight, and a per-row FK check would tax every bulk insert.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('teams')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()::text`))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()

  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()::text`))
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('description', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema.createIndex('projects_team_id_idx').on('projects').column('team_id').execute()

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()::text`))
    .addColumn('kind', 'text', (col) => col.notNull().check(sql`kind in ('project', 'team')`))
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (col) => col.references('projects.id').onDelete('cascade'))
    // SHA-256 of the secret, hex. The secret itself is never stored.
    .addColumn('key_hash', 'text', (col) => col.notNull().unique())
    .addColumn('prefix', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addCheckConstraint('api_keys_project_kind_check', sql`(kind = 'project') = (project_id is not null)`)
    .execute()
  await db.schema.createIndex('api_keys_team_id_idx').on('api_keys').column('team_id').execute()
  await db.schema.createIndex('api_keys_project_id_idx').on('api_keys').column('project_id').execute()

  await db.schema
    .createTable('promptsets')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()::text`))
    .addColumn('project_id', 'text', (col) => col.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('description', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema.createIndex('promptsets_project_id_idx').on('promptsets').column('project_id').execute()

  await db.schema
    .createTable('prompts')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()::text`))
    .addColumn('promptset_id', 'text', (col) => col.notNull().references('promptsets.id').onDelete('cascade'))
    .addColumn('value', 'text', (col) => col.notNull())
    .addColumn('variables', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('model', 'text', (col) => col.notNull())
    .addColumn('model_settings', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('version', 'integer', (col) => col.notNull().check(sql`version > 0`))
    .addColumn('live', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('tags', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('span_id', 'text')
    .addColumn('note', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('prompts_promptset_id_version_key', ['promptset_id', 'version'])
    .execute()
  // At most one live prompt per registry, enforced by the database.
  await db.schema
    .createIndex('prompts_one_live_per_promptset')
    .on('prompts')
    .column('promptset_id')
    .unique()
    .where(sql.ref('live'), '=', true)
    .execute()

  await db.schema
    .createTable('project_retention_policies')
    .addColumn('project_id', 'text', (col) => col.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('enabled', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('retention_days', 'integer', (col) => col.notNull().check(sql`retention_days between 1 and 3650`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('last_run_at', 'timestamptz')
    .addColumn('last_deleted_spans', 'bigint')
    .execute()

  await db.schema
    .createTable('spans')
    .addColumn('project_id', 'text', (col) => col.notNull())
    .addColumn('trace_id', 'text', (col) => col.notNull())
    .addColumn('span_id', 'text', (col) => col.notNull())
    .addColumn('parent_span_id', 'text')
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('kind', 'smallint', (col) => col.notNull())
    // timestamptz keeps microseconds, the precision the API promises; the exact nanosecond duration
    // is kept beside it.
    .addColumn('start_time', 'timestamptz', (col) => col.notNull())
    .addColumn('end_time', 'timestamptz', (col) => col.notNull())
    .addColumn('duration_ns', 'bigint', (col) => col.notNull())
    .addColumn('trace_state', 'text')
    .addColumn('status_code', 'smallint', (col) => col.notNull().defaultTo(0))
    .addColumn('status_message', 'text')
    .addColumn('service_name', 'text')
    .addColumn('service_version', 'text')
    .addColumn('scope_name', 'text')
    .addColumn('scope_version', 'text')
    .addColumn('llm_vendor', 'text')
    .addColumn('llm_model', 'text')
    .addColumn('llm_request_type', 'text')
    .addColumn('input_tokens', 'bigint')
    .addColumn('output_tokens', 'bigint')
    .addColumn('total_tokens', 'bigint')
    .addColumn('attributes', 'jsonb', (col) => col.notNull())
    .addColumn('resource_attributes', 'jsonb', (col) => col.notNull())
    .addColumn('events', 'jsonb', (col) => col.notNull())
    .addColumn('links', 'jsonb', (col) => col.notNull())
    .addColumn('received_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('spans_pkey', ['project_id', 'trace_id', 'span_id'])
    .execute()
  // Serves the janitor's per-project cutoff deletes and the trace list's time ranges.
  await db.schema.createIndex('spans_project_id_start_time_idx').on('spans').columns(['project_id', 'start_time']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['spans', 'project_retention_policies', 'prompts', 'promptsets', 'api_keys', 'projects', 'teams']) {
    await db.schema.dropTable(table).ifExists().execute()
  }
}
