import { sql, type Kysely } from 'kysely'

// Frozen in time: never import application code here, never change this file once released.
//
// Datasets: a project's named sets of items ({input, expectedOutput?, metadata?}, JSON), versioned
// as Phoenix versions its datasets: every change (items added, replaced or deleted) raises the
// dataset's version by one, and an item row is valid from the version that added it until the
// version that replaced or deleted it (valid_to, exclusive; null while current). So the items of
// version v are those with valid_from <= v < coalesce(valid_to, ∞), and an experiment records the
// version it ran on. A replaced item keeps its id: the old row is closed, a new one opened.
// source_trace_id and source_span_id keep the link to the trace or span an item was taken from.
// position is the item's place in the dataset: the order items were first added, kept by a
// replaced item, so a dataset reads in the same order in every version.
//
// Experiments: one prompt version (or, kind 'sdk', the caller's own code) run over every item of
// one version of a dataset. experiment_results hold one row per item: its status, the output, the
// latency, tokens and cost of the call, and the trace that records it; evaluators score those
// traces like any other (scores on trace_id), so the results' scores are found through trace_id.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table datasets (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      name text not null,
      description text not null default '',
      metadata jsonb not null default '{}',
      version integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint datasets_name_unique unique (project_id, name)
    )`.execute(db)

  await sql`
    create table dataset_items (
      dataset_id text not null references datasets (id) on delete cascade,
      id text not null,
      valid_from integer not null,
      valid_to integer,
      position integer not null,
      input jsonb not null,
      expected_output jsonb,
      metadata jsonb,
      source_trace_id text,
      source_span_id text,
      created_at timestamptz not null default now(),
      primary key (dataset_id, id, valid_from),
      constraint dataset_items_validity_check check (valid_to is null or valid_to > valid_from)
    )`.execute(db)
  // At most one current row per item id; the current items in the order they were added.
  await sql`create unique index dataset_items_current_unique on dataset_items (dataset_id, id) where valid_to is null`.execute(db)
  await sql`create index dataset_items_position_idx on dataset_items (dataset_id, position)`.execute(db)

  await sql`
    create table experiments (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      dataset_id text not null references datasets (id) on delete cascade,
      dataset_version integer not null,
      name text not null,
      description text not null default '',
      metadata jsonb not null default '{}',
      kind text not null check (kind in ('prompt', 'sdk')),
      promptset_id text,
      prompt_version integer,
      connection_id text references llm_connections (id) on delete set null,
      model text,
      model_settings jsonb not null default '{}',
      evaluator_ids jsonb not null default '[]',
      status text not null default 'queued' check (status in ('queued', 'running', 'completed', 'external')),
      item_count integer not null default 0,
      created_at timestamptz not null default now(),
      finished_at timestamptz
    )`.execute(db)
  await sql`create index experiments_dataset_idx on experiments (project_id, dataset_id, created_at desc)`.execute(db)
  await sql`create index experiments_queued_idx on experiments (created_at) where status in ('queued', 'running')`.execute(db)

  await sql`
    create table experiment_results (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      experiment_id text not null references experiments (id) on delete cascade,
      dataset_item_id text not null,
      status text not null default 'pending' check (status in ('pending', 'completed', 'failed')),
      attempts integer not null default 0,
      error text,
      output jsonb,
      trace_id text,
      span_id text,
      model text,
      input_tokens integer,
      output_tokens integer,
      cost_usd numeric,
      latency_ms integer,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint experiment_results_item_unique unique (experiment_id, dataset_item_id)
    )`.execute(db)
  await sql`create index experiment_results_pending_idx on experiment_results (updated_at) where status = 'pending'`.execute(db)
  await sql`create index experiment_results_trace_idx on experiment_results (project_id, trace_id) where trace_id is not null`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('experiment_results').ifExists().execute()
  await db.schema.dropTable('experiments').ifExists().execute()
  await db.schema.dropTable('dataset_items').ifExists().execute()
  await db.schema.dropTable('datasets').ifExists().execute()
}
