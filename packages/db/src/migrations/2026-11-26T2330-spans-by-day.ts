import { sql, type Kysely } from 'kysely'

// `spans` becomes a table partitioned by day of start_time (UTC), so that retention can drop a
// day whose every span has expired instead of deleting it row by row (docs/operations.md#partitions).
//
// - The primary key becomes (project_id, trace_id, span_id, start_time): Postgres wants the
//   partition key in every unique key. A resent span is still stored once: its start time comes
//   from the span's own bytes (no server clock is involved), and every resend (an SDK retry, a
//   redelivered queue job, a replay) carries the same bytes, so it lands in the same partition,
//   where the key refuses it.
// - Daily partitions `spans_pYYYYMMDD` are made ahead of need (the writer and the janitor call
//   the same function the migration copies below); `spans_default` takes any span whose day has
//   no partition (a clock days off, a late span of a day already dropped), so no insert fails.
//
// Online, for an installation with data, while the previous version's services run (GitLab's way
// of partitioning a live table): a partitioned copy `spans_by_day` is made, a trigger on `spans`
// mirrors every insert and delete into it, the rows stored before are copied in batches of
// COPY_BATCH_SIZE in primary-key order (each batch its own transaction, the position kept in
// `spans_by_day_progress`, so a stopped run resumes where it was), and a last short transaction
// swaps the names and drops the old table. Run without a wrapping transaction (migrator.ts).
//
// Frozen in time: the partition DDL is copied here, not imported, so that it never changes under
// an installation that has not run this yet.

/** Read by migrator.ts: run without a wrapping transaction (see above). */
export const transactional = false

/** Rows copied per statement: a few MB of attributes, row locks held for a fraction of a second. */
export const COPY_BATCH_SIZE = 5_000

const dayMs = 86_400_000

const dayName = (day: Date) => `spans_p${day.toISOString().slice(0, 10).replaceAll('-', '')}`

export async function up(db: Kysely<unknown>): Promise<void> {
  if (await isPartitioned(db, 'spans')) return
  await prepare(db)
  await createPartitionsOfStoredDays(db)
  await copyStoredSpans(db)
  await swap(db)
}

async function isPartitioned(db: Kysely<unknown>, table: string): Promise<boolean> {
  const { rows } = await sql<{ kind: string }>`select relkind::text as kind from pg_class where oid = to_regclass(${table})`.execute(db)
  return rows[0]?.kind === 'p'
}

/** The partitioned copy, its default partition and the mirroring trigger: one transaction, rerunnable. */
export async function prepare(db: Kysely<unknown>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await isPartitioned(trx, 'spans_by_day'))) {
      await sql`create table spans_by_day (like spans including defaults) partition by range (start_time)`.execute(trx)
      await sql`alter table spans_by_day add constraint spans_by_day_pkey primary key (project_id, trace_id, span_id, start_time)`.execute(trx)
      await sql`create index spans_by_day_project_id_start_time_idx on spans_by_day (project_id, start_time)`.execute(trx)
      await sql`create table spans_default partition of spans_by_day default`.execute(trx)
      await sql`create table spans_by_day_progress (project_id text not null, trace_id text not null, span_id text not null)`.execute(trx)
    }
    // The days around today, before the trigger mirrors a span into them, so that none is made
    // under the writers' feet; on an empty database none (the writers make them when they start,
    // and a database migrated once as a test template would otherwise hold days long past).
    const { rows: [stored] } = await sql<{ any: boolean }>`select exists (select 1 from spans) as any`.execute(trx)
    if (stored?.any) {
      const today = Math.floor(Date.now() / dayMs) * dayMs
      for (let offset = -1; offset <= 3; offset++) await createDay(trx, 'spans_by_day', new Date(today + offset * dayMs))
    }
    // Statement-level for inserts (a COPY of 5,000 spans is one trigger call); row-level for
    // deletes, each found by its key in its own partition.
    await sql`
      create or replace function tracewell_spans_mirror_inserts() returns trigger language plpgsql as $$
      begin
        insert into spans_by_day select * from inserted on conflict do nothing;
        return null;
      end $$`.execute(trx)
    await sql`
      create or replace function tracewell_spans_mirror_changes() returns trigger language plpgsql as $$
      begin
        delete from spans_by_day where project_id = old.project_id and trace_id = old.trace_id and span_id = old.span_id and start_time = old.start_time;
        if tg_op = 'UPDATE' then
          insert into spans_by_day select (new).* on conflict do nothing;
        end if;
        return null;
      end $$`.execute(trx)
    await sql`drop trigger if exists spans_mirror_inserts on spans`.execute(trx)
    await sql`drop trigger if exists spans_mirror_changes on spans`.execute(trx)
    await sql`create trigger spans_mirror_inserts after insert on spans referencing new table as inserted for each statement execute function tracewell_spans_mirror_inserts()`.execute(trx)
    await sql`create trigger spans_mirror_changes after update or delete on spans for each row execute function tracewell_spans_mirror_changes()`.execute(trx)
  })
}

/**
 * A partition of `parent` for one UTC day, unless it exists. Rows of that day already in the
 * default partition move into it in the same transaction (Postgres refuses to attach a range the
 * default partition holds rows of). Made apart and then attached, because ATTACH takes a lock on
 * the parent that inserts do not wait for, where CREATE TABLE … PARTITION OF would stop them.
 */
async function createDay(trx: Kysely<unknown>, parent: string, day: Date): Promise<void> {
  const name = dayName(day)
  const { rows } = await sql<{ found: boolean }>`select to_regclass(${name}) is not null as found`.execute(trx)
  if (rows[0]?.found) return
  const from = day.toISOString()
  const to = new Date(day.getTime() + dayMs).toISOString()
  await sql`create table ${sql.id(name)} (like ${sql.id(parent)} including defaults)`.execute(trx)
  // Until the attach commits, no span may reach the default partition: one of that day arriving
  // after the move would make the attach fail. Inserts into the other partitions go on.
  await sql`lock table spans_default in exclusive mode`.execute(trx)
  await sql`
    with moved as (delete from spans_default where start_time >= ${from}::timestamptz and start_time < ${to}::timestamptz returning *)
    insert into ${sql.id(name)} select * from moved`.execute(trx)
  await sql`alter table ${sql.id(parent)} attach partition ${sql.id(name)} for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(trx)
}

/**
 * A partition for every day that holds a stored span, found through the (project_id, start_time)
 * index by skipping from day to day (one index probe a project and day, not a scan of the table).
 */
export async function createPartitionsOfStoredDays(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ day: Date }>`
    with recursive projects as (
      select min(project_id) as id from spans
      union all
      select (select min(project_id) from spans where project_id > p.id) from projects p where p.id is not null
    ), days as (
      select p.id, (select date_trunc('day', min(start_time), 'UTC') from spans where project_id = p.id) as day from projects p where p.id is not null
      union all
      select d.id, (select date_trunc('day', min(start_time), 'UTC') from spans where project_id = d.id and start_time >= d.day + interval '1 day')
      from days d where d.day is not null
    )
    select distinct day from days where day is not null order by day`.execute(db)
  for (const { day } of rows) await db.transaction().execute((trx) => createDay(trx, 'spans_by_day', day))
}

/**
 * Copies the spans stored before the trigger, a batch at a time in primary-key order, from where
 * the last committed batch ended. The batch's rows are locked (FOR KEY SHARE) while it is copied,
 * so a delete of one of them waits, and its trigger then deletes the copy: a span deleted during
 * the migration never comes back.
 */
export async function copyStoredSpans(db: Kysely<unknown>, { batchSize = COPY_BATCH_SIZE, maxBatches = Infinity } = {}): Promise<void> {
  for (let batches = 0; batches < maxBatches; batches++) {
    const copied = await db.transaction().execute(async (trx) => {
      const { rows: [after] } = await sql<{ project_id: string; trace_id: string; span_id: string }>`select * from spans_by_day_progress`.execute(trx)
      const position = after ? sql`(project_id, trace_id, span_id) > (${after.project_id}, ${after.trace_id}, ${after.span_id})` : sql`true`
      const { rows: [last] } = await sql<{ project_id: string; trace_id: string; span_id: string; rows: number }>`
        with batch as (
          select * from spans where ${position} order by project_id, trace_id, span_id limit ${batchSize} for key share
        ), copied as (
          insert into spans_by_day select * from batch on conflict do nothing
        )
        select project_id, trace_id, span_id, (select count(*)::int from batch) as rows
        from batch order by project_id desc, trace_id desc, span_id desc limit 1`.execute(trx)
      if (last === undefined) return 0
      await sql`delete from spans_by_day_progress`.execute(trx)
      await sql`insert into spans_by_day_progress values (${last.project_id}, ${last.trace_id}, ${last.span_id})`.execute(trx)
      return last.rows
    })
    if (copied < batchSize) return
  }
}

/** The partitioned table takes the name `spans`; the old one goes. One short transaction, retried while the lock is busy. */
async function swap(db: Kysely<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db.transaction().execute(async (trx) => {
        // Waits for the statements running on spans, and makes new ones wait only this long.
        await sql`set local lock_timeout = '5s'`.execute(trx)
        await sql`lock table spans in access exclusive mode`.execute(trx)
        await sql`drop trigger spans_mirror_inserts on spans`.execute(trx)
        await sql`drop trigger spans_mirror_changes on spans`.execute(trx)
        await sql`drop function tracewell_spans_mirror_inserts()`.execute(trx)
        await sql`drop function tracewell_spans_mirror_changes()`.execute(trx)
        await sql`drop table spans`.execute(trx)
        await sql`drop table spans_by_day_progress`.execute(trx)
        await sql`alter table spans_by_day rename to spans`.execute(trx)
        await sql`alter table spans rename constraint spans_by_day_pkey to spans_pkey`.execute(trx)
        await sql`alter index spans_by_day_project_id_start_time_idx rename to spans_project_id_start_time_idx`.execute(trx)
        // The previous version's janitor deletes `where ctid = any(…)` through `spans`; on the
        // partitioned table that would also delete the rows at the same positions of every other
        // partition, whatever their project. Until it is replaced, its statement fails instead.
        await sql`
          create function tracewell_spans_refuse_ctid_delete() returns trigger language plpgsql as $$
          begin
            if position('ctid' in lower(current_query())) > 0 then
              raise exception 'spans is partitioned by day: a delete by ctid through it would reach every partition (a janitor of the previous version?)'
                using errcode = '0A000';
            end if;
            return null;
          end $$`.execute(trx)
        await sql`create trigger spans_refuse_ctid_delete before delete on spans for each statement execute function tracewell_spans_refuse_ctid_delete()`.execute(trx)
      })
      return
    } catch (error) {
      const lockNotAvailable = (error as { code?: unknown }).code === '55P03'
      if (!lockNotAvailable || attempt >= 20) throw error
    }
  }
}

/**
 * Back to one table: every span copied into it (a span stored under two start times keeps one
 * row). In the caller's transaction, as kysely's migrator runs a down migration in one.
 */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(await isPartitioned(db, 'spans'))) return
  await sql`drop trigger if exists spans_refuse_ctid_delete on spans`.execute(db)
  await sql`drop function if exists tracewell_spans_refuse_ctid_delete()`.execute(db)
  await sql`create table spans_flat (like spans including defaults)`.execute(db)
  await sql`alter table spans_flat add constraint spans_flat_pkey primary key (project_id, trace_id, span_id)`.execute(db)
  await sql`insert into spans_flat select * from spans order by project_id, trace_id, span_id, start_time on conflict do nothing`.execute(db)
  await sql`drop table spans`.execute(db)
  await sql`alter table spans_flat rename to spans`.execute(db)
  await sql`alter table spans rename constraint spans_flat_pkey to spans_pkey`.execute(db)
  await sql`create index spans_project_id_start_time_idx on spans (project_id, start_time)`.execute(db)
}
