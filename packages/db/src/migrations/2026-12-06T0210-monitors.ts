import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// Issue 45 §1. A monitor watches one metric of a project (metric-series.repository.ts) over a
// rolling window, or over the calendar month (a cost budget), against a threshold; the evaluator
// claims the due ones (next_evaluation_at) with FOR UPDATE SKIP LOCKED, so each is evaluated once
// per interval however many replicas run.
//
// monitor_events is both the history of a monitor's state changes and the notification outbox:
// the state change and its event are written in one transaction, and the delivery worker turns
// each event with channel_ids into deliveries, marking it dispatched (dispatched_at), so one
// change is notified once.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table monitors (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      name text not null,
      metric text not null,
      score_name text,
      filter jsonb not null default '{}'::jsonb,
      window_kind text not null default 'rolling' check (window_kind in ('rolling', 'calendar_month')),
      window_seconds integer check (window_seconds > 0),
      operator text not null check (operator in ('>', '>=', '<', '<=')),
      threshold double precision not null,
      evaluate_every_seconds integer not null default 60 check (evaluate_every_seconds >= 10),
      channel_ids text[] not null default '{}',
      renotify_after_seconds integer check (renotify_after_seconds > 0),
      muted_until timestamptz,
      budget_percents integer[],
      budget_month text,
      budget_notified_percent integer,
      state text not null default 'ok' check (state in ('ok', 'alerting', 'no_data')),
      state_value double precision,
      state_changed_at timestamptz,
      last_value double precision,
      last_evaluated_at timestamptz,
      next_evaluation_at timestamptz not null default now(),
      last_notified_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint monitors_window check ((window_kind = 'rolling') = (window_seconds is not null))
    )`.execute(db)
  await sql`create index monitors_project_idx on monitors (project_id, created_at, id)`.execute(db)
  await sql`create index monitors_due_idx on monitors (next_evaluation_at)`.execute(db)
  await sql`
    create table monitor_events (
      id text primary key default gen_random_uuid()::text,
      monitor_id text not null references monitors (id) on delete cascade,
      project_id text not null,
      kind text not null check (kind in ('alerting', 'resolved', 'no_data', 'renotify', 'budget')),
      state text not null check (state in ('ok', 'alerting', 'no_data')),
      value double precision,
      threshold double precision not null,
      window_from timestamptz not null,
      window_to timestamptz not null,
      channel_ids text[] not null default '{}',
      created_at timestamptz not null default now(),
      dispatched_at timestamptz
    )`.execute(db)
  await sql`create index monitor_events_monitor_idx on monitor_events (monitor_id, created_at desc, id desc)`.execute(db)
  await sql`create index monitor_events_undispatched_idx on monitor_events (created_at) where dispatched_at is null and channel_ids <> '{}'`.execute(db)
  // judge_failure_rate: a project's finished judgments by when they finished.
  await sql`create index evaluation_jobs_finished_idx on evaluation_jobs (project_id, updated_at) where status in ('completed', 'failed')`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists evaluation_jobs_finished_idx`.execute(db)
  await db.schema.dropTable('monitor_events').ifExists().execute()
  await db.schema.dropTable('monitors').ifExists().execute()
}
