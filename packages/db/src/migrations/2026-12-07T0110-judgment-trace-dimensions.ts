import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// Frozen in time: never import application code here.
//
// judge_failure_rate (issue 45 §3) read each finished judgment of the window and looked its
// trace's summary up (a lookup in the day partitions of trace_summaries a judgment), grouped or
// not: 42,000 lookups for a month of bench:dashboards' project. judgment_dimensions is to
// evaluation_jobs what score_dimensions (migration 2026-12-06T2200) is to scores: a row a finished
// judgment (completed or failed) with its finish time, whether it failed, and its trace's
// dimensions as its summary holds them, kept the same two ways:
// - triggers on evaluation_jobs (the judges, erasure and a project's deletion alike) write the
//   judgment's own fields, its trace's dimensions left unknown (`summarised` false);
// - the fold copies a trace's dimensions onto its judgments' rows as onto its scores' (the same
//   statement, keepTraceDimensionCopies in the db package).
// Run it with the writers stopped, as migration 2026-12-06T2200.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table judgment_dimensions (
      project_id text not null,
      job_id text not null,
      created_at timestamptz not null,
      finished_at timestamptz not null,
      failed boolean not null,
      trace_id text not null,
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
      primary key (project_id, job_id)
    )`.execute(db)
  // The metric engine's read: the judgments finished in a window, every column it reads included.
  await sql`
    create index judgment_dimensions_finished_idx on judgment_dimensions (project_id, finished_at)
    include (failed, summarised, service_name, models, response_models, vendors, services, prompts, tags, user_id, session_id)`.execute(db)
  // The fold's: the rows of the traces whose dimensions changed. And those still unknown (few), by
  // window too: the metric engine's read of them otherwise scanned the window's every row again.
  await sql`create index judgment_dimensions_trace_idx on judgment_dimensions (project_id, trace_id)`.execute(db)
  await sql`create index judgment_dimensions_unknown_idx on judgment_dimensions (project_id, finished_at) where not summarised`.execute(db)
  await sql`
    create function tracewell_judgment_dimensions_write() returns trigger language plpgsql as $$
    begin
      -- Each statement names only the transition tables of its event (a DELETE has no new_jobs).
      if tg_op = 'DELETE' then
        delete from judgment_dimensions d using old_jobs o where d.project_id = o.project_id and d.job_id = o.id;
      elsif tg_op = 'UPDATE' then
        delete from judgment_dimensions d using old_jobs o
        where d.project_id = o.project_id and d.job_id = o.id
          and not exists (select 1 from new_jobs n where n.project_id = o.project_id and n.id = o.id and n.status in ('completed', 'failed'));
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        insert into judgment_dimensions as d (project_id, job_id, created_at, finished_at, failed, trace_id, summarised)
        select n.project_id, n.id, n.created_at, n.updated_at, n.status = 'failed', n.trace_id, false
        from new_jobs n where n.status in ('completed', 'failed')
        order by 1, 2
        on conflict (project_id, job_id) do update set created_at = excluded.created_at, finished_at = excluded.finished_at, failed = excluded.failed,
          trace_id = excluded.trace_id,
          summarised = d.summarised and d.trace_id = excluded.trace_id,
          sought = d.sought and d.trace_id = excluded.trace_id,
          service_name = case when d.trace_id = excluded.trace_id then d.service_name end,
          models = case when d.trace_id = excluded.trace_id then d.models end,
          response_models = case when d.trace_id = excluded.trace_id then d.response_models end,
          vendors = case when d.trace_id = excluded.trace_id then d.vendors end,
          services = case when d.trace_id = excluded.trace_id then d.services end,
          prompts = case when d.trace_id = excluded.trace_id then d.prompts end,
          tags = case when d.trace_id = excluded.trace_id then d.tags end,
          user_id = case when d.trace_id = excluded.trace_id then d.user_id end,
          session_id = case when d.trace_id = excluded.trace_id then d.session_id end;
      end if;
      return null;
    end $$`.execute(db)
  await sql`create trigger evaluation_jobs_dimensions_insert after insert on evaluation_jobs referencing new table as new_jobs for each statement execute function tracewell_judgment_dimensions_write()`.execute(db)
  await sql`create trigger evaluation_jobs_dimensions_update after update on evaluation_jobs referencing old table as old_jobs new table as new_jobs for each statement execute function tracewell_judgment_dimensions_write()`.execute(db)
  await sql`create trigger evaluation_jobs_dimensions_delete after delete on evaluation_jobs referencing old table as old_jobs for each statement execute function tracewell_judgment_dimensions_write()`.execute(db)
  await backfillJudgmentDimensions(db)
}

/**
 * Every finished judgment's row, its trace's dimensions looked up in the fold days of its creation
 * day and the day before (a trace is summarised before it is judged), then in all (also what
 * bench:dashboards loads them with). Run it with the summariser stopped.
 */
export async function backfillJudgmentDimensions(db: AnyDb): Promise<void> {
  await sql`delete from judgment_dimensions`.execute(db)
  await sql`
    insert into judgment_dimensions (project_id, job_id, created_at, finished_at, failed, trace_id, summarised, sought,
      service_name, models, response_models, vendors, services, prompts, tags, user_id, session_id)
    select j.project_id, j.id, j.created_at, j.updated_at, j.status = 'failed', j.trace_id, t.trace_id is not null, true,
      t.service_name, t.models, t.response_models, t.vendors, t.services, t.prompts, t.tags, t.user_id, t.session_id
    from evaluation_jobs j
    left join lateral (select * from (
        (select t0.* from trace_summaries t0 where t0.project_id = j.project_id and t0.trace_id = j.trace_id
          and t0.fold_day <= (j.created_at at time zone 'UTC')::date and t0.fold_day >= (j.created_at at time zone 'UTC')::date - 1 limit 1)
        union all (select t0.* from trace_summaries t0 where t0.project_id = j.project_id and t0.trace_id = j.trace_id limit 1)
      ) t1 limit 1) t on true
    where j.status in ('completed', 'failed')`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const event of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.id(`evaluation_jobs_dimensions_${event}`)} on evaluation_jobs`.execute(db)
  await sql`drop function if exists tracewell_judgment_dimensions_write()`.execute(db)
  await sql`drop table if exists judgment_dimensions`.execute(db)
}
