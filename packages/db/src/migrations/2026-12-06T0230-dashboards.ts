import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// Dashboards: a project's named set of widgets, each a metric over the rollups and summaries
// (metric-series.repository.ts) drawn as a chart. The widgets are one jsonb document: they are
// always read and written whole, with their grid layout, and never queried one by one.
//
// Every project has one default dashboard, made when its list is first read: the partial unique
// index lets concurrent first reads insert it once (`on conflict do nothing`).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table dashboards (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      name text not null,
      widgets jsonb not null default '[]'::jsonb,
      is_default boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index dashboards_project_idx on dashboards (project_id, created_at, id)`.execute(db)
  await sql`create unique index dashboards_one_default_idx on dashboards (project_id) where is_default`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('dashboards').ifExists().execute()
}
