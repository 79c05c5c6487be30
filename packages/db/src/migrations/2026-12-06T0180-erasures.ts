import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// Erasure requests (GDPR art. 17): one row per request, its subject (a user, a session or a list
// of traces), its progress and what it deleted, kept after it completes as the record that it
// ran (there is no audit log yet). erasure_traces lists the traces an erasure took, or still has
// to take (traces given by id, experiment traces of dataset items it deleted): its second pass
// (the re-check, once the queue has drained) goes over them again, for spans, scores and
// judgments that arrived after the first.
//
// The erasure finds the traces of a user or session through trace_summaries' own indexes; these
// indexes find the judgments and dataset items of a trace, which had none by trace.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table erasure_requests (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      user_id text,
      session_id text,
      trace_count integer not null default 0,
      status text not null default 'queued' check (status in ('queued', 'running', 'rechecking', 'completed')),
      recheck_at timestamptz,
      deleted_spans bigint not null default 0,
      deleted_traces integer not null default 0,
      deleted_sessions integer not null default 0,
      deleted_scores integer not null default 0,
      deleted_judgments integer not null default 0,
      deleted_dataset_items integer not null default 0,
      requested_by text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      completed_at timestamptz,
      constraint erasure_requests_one_subject check (num_nonnulls(user_id, session_id) <= 1)
    )`.execute(db)
  await sql`create index erasure_requests_project_idx on erasure_requests (project_id, created_at desc, id desc)`.execute(db)
  await sql`create index erasure_requests_open_idx on erasure_requests (created_at) where status <> 'completed'`.execute(db)
  await sql`
    create table erasure_traces (
      erasure_id text not null references erasure_requests (id) on delete cascade,
      trace_id text not null,
      erased boolean not null default false,
      primary key (erasure_id, trace_id)
    )`.execute(db)
  await sql`create index erasure_traces_todo_idx on erasure_traces (erasure_id) where not erased`.execute(db)
  await sql`create index evaluation_jobs_trace_idx on evaluation_jobs (project_id, trace_id)`.execute(db)
  await sql`create index dataset_items_source_trace_idx on dataset_items (source_trace_id) where source_trace_id is not null`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists dataset_items_source_trace_idx`.execute(db)
  await sql`drop index if exists evaluation_jobs_trace_idx`.execute(db)
  await db.schema.dropTable('erasure_traces').ifExists().execute()
  await db.schema.dropTable('erasure_requests').ifExists().execute()
}
