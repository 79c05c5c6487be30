import { sql, type Kysely } from 'kysely'

// Frozen in time: never import application code here, never change this file once released.
//
// Scores: what people, SDKs and LLM judges said about a trace, one of its spans, or a session
// (user feedback, annotations, evaluations). A score's id is the caller's when given, so that a
// resent score is the same row (the primary key is per project, like every other key here).
//
// value holds the number every kind of score has: the number itself, 1 or 0 for a boolean, the
// category's value for a categorical score whose configuration gives one; string_value holds the
// category's label, or 'true' / 'false'. Averages and range filters read value alone.
//
// score_configs are a project's named scores: their type and range or categories, which scores
// of that name are checked against.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table score_configs (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      name text not null,
      data_type text not null check (data_type in ('numeric', 'boolean', 'categorical')),
      min_value double precision,
      max_value double precision,
      categories jsonb,
      description text not null default '',
      created_at timestamptz not null default now(),
      constraint score_configs_name_unique unique (project_id, name),
      constraint score_configs_range_check check (min_value is null or max_value is null or min_value <= max_value),
      constraint score_configs_categories_check check ((data_type = 'categorical') = (categories is not null))
    )`.execute(db)

  await sql`
    create table scores (
      project_id text not null references projects (id) on delete cascade,
      id text not null,
      trace_id text,
      span_id text,
      session_id text,
      name text not null,
      data_type text not null check (data_type in ('numeric', 'boolean', 'categorical')),
      value double precision,
      string_value text,
      comment text,
      source text not null check (source in ('api', 'annotation', 'eval')),
      author text,
      config_id text references score_configs (id) on delete set null,
      evaluator_id text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (project_id, id),
      constraint scores_subject_check check (trace_id is not null or session_id is not null),
      constraint scores_value_check check (value is not null or string_value is not null)
    )`.execute(db)
  // A trace's scores (one trace, the list's page of traces, the score filter).
  await sql`create index scores_trace_idx on scores (project_id, trace_id, name) where trace_id is not null`.execute(db)
  await sql`create index scores_session_idx on scores (project_id, session_id) where session_id is not null`.execute(db)
  // The score list (newest first) and usage's averages by name over time.
  await sql`create index scores_created_idx on scores (project_id, created_at desc, id desc)`.execute(db)
  await sql`create index scores_name_created_idx on scores (project_id, name, created_at)`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('scores').ifExists().execute()
  await db.schema.dropTable('score_configs').ifExists().execute()
}
