import { sql, type Kysely } from 'kysely'

// Frozen in time: never import application code here, never change this file once released.
//
// LLM-as-judge. llm_connections are a project's OpenAI-compatible endpoints; the API key is kept
// only sealed (AES-256-GCM with LLM_CONNECTION_ENCRYPTION_KEY: nonce, tag and ciphertext in one
// base64 text) beside the last four characters people recognise it by.
//
// evaluators judge traces with a connection's model: a prompt (inline, or a registry prompt by
// name and label), the score name the judgment becomes, a filter in GET /api/traces's parameters
// and a sampling rate. evaluation_jobs hold one judgment each (its status, error, the judge's
// tokens and cost, the score it gave): at most one per evaluator and trace for new traces
// (run_id null), one per run and trace for on-demand runs over a time range (evaluation_runs).
// The rows are what makes a trace judged once, and a failed judgment visible.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table llm_connections (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      name text not null,
      provider text not null check (provider in ('openai')),
      base_url text not null,
      api_key_sealed text not null,
      api_key_hint text not null,
      created_at timestamptz not null default now(),
      constraint llm_connections_name_unique unique (project_id, name)
    )`.execute(db)

  await sql`
    create table evaluators (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      name text not null,
      connection_id text not null references llm_connections (id) on delete restrict,
      model text not null,
      prompt text,
      prompt_name text,
      prompt_label text,
      score_name text not null,
      filter jsonb not null default '{}',
      sampling_rate double precision not null default 1 check (sampling_rate >= 0 and sampling_rate <= 1),
      enabled boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint evaluators_name_unique unique (project_id, name),
      constraint evaluators_prompt_check check ((prompt is null) <> (prompt_name is null))
    )`.execute(db)
  await sql`create index evaluators_connection_idx on evaluators (connection_id)`.execute(db)

  await sql`
    create table evaluation_runs (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      evaluator_id text not null references evaluators (id) on delete cascade,
      from_time timestamptz not null,
      to_time timestamptz not null,
      status text not null default 'queued' check (status in ('queued', 'running', 'completed')),
      trace_count integer,
      created_at timestamptz not null default now(),
      finished_at timestamptz
    )`.execute(db)
  await sql`create index evaluation_runs_queued_idx on evaluation_runs (created_at) where status <> 'completed'`.execute(db)
  await sql`create index evaluation_runs_evaluator_idx on evaluation_runs (evaluator_id, created_at desc)`.execute(db)

  await sql`
    create table evaluation_jobs (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      evaluator_id text not null references evaluators (id) on delete cascade,
      run_id text references evaluation_runs (id) on delete cascade,
      trace_id text not null,
      status text not null default 'pending' check (status in ('pending', 'completed', 'failed', 'skipped')),
      attempts integer not null default 0,
      error text,
      score_id text,
      judge_model text,
      input_tokens integer,
      output_tokens integer,
      cost_usd numeric,
      latency_ms integer,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create unique index evaluation_jobs_new_trace_unique on evaluation_jobs (evaluator_id, trace_id) where run_id is null`.execute(db)
  await sql`create unique index evaluation_jobs_run_trace_unique on evaluation_jobs (run_id, trace_id) where run_id is not null`.execute(db)
  // An evaluator's judgments, newest first, by status (failures visible in the API).
  await sql`create index evaluation_jobs_evaluator_idx on evaluation_jobs (evaluator_id, created_at desc, id desc)`.execute(db)
  await sql`create index evaluation_jobs_pending_idx on evaluation_jobs (updated_at) where status = 'pending'`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('evaluation_jobs').ifExists().execute()
  await db.schema.dropTable('evaluation_runs').ifExists().execute()
  await db.schema.dropTable('evaluators').ifExists().execute()
  await db.schema.dropTable('llm_connections').ifExists().execute()
}
