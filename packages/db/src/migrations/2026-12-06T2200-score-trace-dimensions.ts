import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// Frozen in time: never import application code here.
//
// score_avg by a group of the trace (model, vendor, service, user, session, prompt, tag) or with
// one filter of those (issue 45 §3) read each score of the window and looked its trace's summary
// up: 42,000 lookups in the day partitions of trace_summaries for a month of bench:dashboards'
// project, 0.6–1.3 s a widget. score_dimensions holds, a row a score with a value, the score's
// name, time and value and its trace's dimensions as its summary holds them, so that those widgets
// read the window's rows of one score name and nothing else.
//
// A row is kept in two places:
// - triggers on scores (every insert, update and delete: the API, the judges, retention and erasure
//   alike) write the score's own fields, its trace's dimensions left unknown (`summarised` false)
//   unless it has no trace (all null, as the summaries' join gives for it);
// - the fold (the only writer of a summary's dimensions, under its lock) copies a trace's
//   dimensions onto its scores' rows when it writes a trace whose dimensions changed, and onto
//   every row still unknown: once looked up in every day partition (`sought`), then only in the
//   partition the fold writes to, where a trace folded later will be.
// The metric engine reads a row whose dimensions are unknown through the summaries' join, as
// before: a score that arrived before its trace, or since the last fold, is counted right.
//
// The backfill looks each score's trace up once: 48 s for the 126,511 scores of bench:dashboards'
// 10-million-span seed at load 14 (docs/benchmarks.md), 125 MB with the indexes. Run it with the
// writers stopped, as the summary migrations.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table score_dimensions (
      project_id text not null,
      score_id text not null,
      name text not null,
      created_at timestamptz not null,
      value double precision not null,
      trace_id text,
      summarised boolean not null,
      sought boolean not null default false,
      service_name text,
      models text[],
      response_models text[],
      vendors text[],
      services text[],
      prompts text[],
      tags text[],
      user_id text,
      session_id text,
      primary key (project_id, score_id)
    )`.execute(db)
  // The metric engine's read: a score name's rows over a window, every column it reads included, so
  // that it is an index-only scan of the project's range (the table's pages hold every project's
  // rows, and a month's 42,000 of bench:dashboards' project were read from all 6,400 of them).
  await sql`
    create index score_dimensions_name_created_idx on score_dimensions (project_id, name, created_at)
    include (value, summarised, service_name, models, response_models, vendors, services, prompts, tags, user_id, session_id)`.execute(db)
  // The fold's: the rows of the traces whose dimensions changed, and those still unknown (few).
  await sql`create index score_dimensions_trace_idx on score_dimensions (project_id, trace_id) where trace_id is not null`.execute(db)
  await sql`create index score_dimensions_unknown_idx on score_dimensions (project_id, trace_id) where not summarised`.execute(db)
  // An update is one trigger with both transition tables: the rows of its old scores that no longer
  // hold a value go, the others are written anew, keeping their trace's dimensions when the trace
  // is the same.
  await sql`
    create function tracewell_score_dimensions_write() returns trigger language plpgsql as $$
    begin
      -- Each statement names only the transition tables of its event (a DELETE has no new_scores).
      if tg_op = 'DELETE' then
        delete from score_dimensions d using old_scores o where d.project_id = o.project_id and d.score_id = o.id;
      elsif tg_op = 'UPDATE' then
        delete from score_dimensions d using old_scores o
        where d.project_id = o.project_id and d.score_id = o.id
          and not exists (select 1 from new_scores n where n.project_id = o.project_id and n.id = o.id and n.value is not null);
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        insert into score_dimensions as d (project_id, score_id, name, created_at, value, trace_id, summarised)
        select n.project_id, n.id, n.name, n.created_at, n.value, n.trace_id, n.trace_id is null
        from new_scores n where n.value is not null
        order by 1, 2
        on conflict (project_id, score_id) do update set name = excluded.name, created_at = excluded.created_at, value = excluded.value,
          trace_id = excluded.trace_id,
          summarised = case when d.trace_id is not distinct from excluded.trace_id then d.summarised else excluded.summarised end,
          sought = case when d.trace_id is not distinct from excluded.trace_id then d.sought else false end,
          service_name = case when d.trace_id is not distinct from excluded.trace_id then d.service_name end,
          models = case when d.trace_id is not distinct from excluded.trace_id then d.models end,
          response_models = case when d.trace_id is not distinct from excluded.trace_id then d.response_models end,
          vendors = case when d.trace_id is not distinct from excluded.trace_id then d.vendors end,
          services = case when d.trace_id is not distinct from excluded.trace_id then d.services end,
          prompts = case when d.trace_id is not distinct from excluded.trace_id then d.prompts end,
          tags = case when d.trace_id is not distinct from excluded.trace_id then d.tags end,
          user_id = case when d.trace_id is not distinct from excluded.trace_id then d.user_id end,
          session_id = case when d.trace_id is not distinct from excluded.trace_id then d.session_id end;
      end if;
      return null;
    end $$`.execute(db)
  await sql`create trigger scores_dimensions_insert after insert on scores referencing new table as new_scores for each statement execute function tracewell_score_dimensions_write()`.execute(db)
  await sql`create trigger scores_dimensions_update after update on scores referencing old table as old_scores new table as new_scores for each statement execute function tracewell_score_dimensions_write()`.execute(db)
  await sql`create trigger scores_dimensions_delete after delete on scores referencing old table as old_scores for each statement execute function tracewell_score_dimensions_write()`.execute(db)
  await backfillScoreDimensions(db)
}

/**
 * Every score's row, its trace's dimensions looked up in the fold days of its creation day and the
 * day before (a trace is summarised before it is scored, mostly that day), then in all (also what
 * bench:dashboards loads them with). Run it with the summariser stopped.
 */
export async function backfillScoreDimensions(db: AnyDb): Promise<void> {
  await sql`delete from score_dimensions`.execute(db)
  await sql`
    insert into score_dimensions (project_id, score_id, name, created_at, value, trace_id, summarised, sought,
      service_name, models, response_models, vendors, services, prompts, tags, user_id, session_id)
    select s.project_id, s.id, s.name, s.created_at, s.value, s.trace_id, s.trace_id is null or t.trace_id is not null, true,
      t.service_name, t.models, t.response_models, t.vendors, t.services, t.prompts, t.tags, t.user_id, t.session_id
    from scores s
    left join lateral (select * from (
        (select t0.* from trace_summaries t0 where t0.project_id = s.project_id and t0.trace_id = s.trace_id
          and t0.fold_day <= (s.created_at at time zone 'UTC')::date and t0.fold_day >= (s.created_at at time zone 'UTC')::date - 1 limit 1)
        union all (select t0.* from trace_summaries t0 where t0.project_id = s.project_id and t0.trace_id = s.trace_id limit 1)
      ) t1 limit 1) t on true
    where s.value is not null`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const event of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.id(`scores_dimensions_${event}`)} on scores`.execute(db)
  await sql`drop function if exists tracewell_score_dimensions_write()`.execute(db)
  await sql`drop table if exists score_dimensions`.execute(db)
}
