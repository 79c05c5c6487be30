import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// The audit log (docs/accounts.md#audit-log): who changed what, when, from which address.
// - Append-only for the application: a trigger refuses every UPDATE and TRUNCATE, and every
//   DELETE but those of prune_audit_log(keep_days), the janitor's retention prune. That function
//   says which rows it may remove through a transaction-local setting the trigger reads, and the
//   trigger never lets a row younger than a day go, whoever sets it. The function is SECURITY
//   DEFINER, so a deployment that runs the services as a role other than the tables' owner can
//   also REVOKE UPDATE, DELETE, TRUNCATE on audit_log from that role and keep the prune working.
// - No foreign keys: an entry outlives the team, project, person or key it names (deleting a
//   team is itself recorded, and a cascade would be refused by the trigger anyway).
// - `id` orders entries (the API's cursor); (team_id, id) serves every listing.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table audit_log (
      id bigint generated always as identity primary key,
      created_at timestamptz not null default now(),
      team_id text not null,
      project_id text,
      actor_kind text not null check (actor_kind in ('user', 'team-key', 'project-key')),
      actor_id text not null,
      actor_label text not null,
      action text not null,
      permission text not null,
      resource_type text not null,
      resource_id text,
      method text not null,
      route text not null,
      params jsonb not null default '{}',
      status smallint not null,
      ip text,
      user_agent text,
      before jsonb,
      after jsonb
    )`.execute(db)
  await sql`create index audit_log_team_idx on audit_log (team_id, id desc)`.execute(db)
  await sql`create index audit_log_created_idx on audit_log (created_at)`.execute(db)

  await sql`
    create function audit_log_append_only() returns trigger language plpgsql as $$
    declare
      prune_before text := current_setting('tracewell.audit_log_prune_before', true);
    begin
      if tg_op = 'DELETE' and coalesce(prune_before, '') <> '' then
        if prune_before::timestamptz <= now() - interval '1 day' and old.created_at < prune_before::timestamptz then
          return old;
        end if;
      end if;
      raise exception 'audit_log is append-only: % refused (entries leave only through prune_audit_log)', tg_op
        using errcode = '42501';
    end $$`.execute(db)
  await sql`create trigger audit_log_append_only before update or delete on audit_log for each row execute function audit_log_append_only()`.execute(db)
  await sql`create trigger audit_log_no_truncate before truncate on audit_log for each statement execute function audit_log_append_only()`.execute(db)

  await sql`
    create function prune_audit_log(keep_days integer) returns bigint language plpgsql security definer set search_path from current as $$
    declare
      cutoff timestamptz;
      removed bigint;
    begin
      if keep_days is null or keep_days < 1 then
        raise exception 'prune_audit_log: keep_days must be at least 1, not %', keep_days using errcode = '22023';
      end if;
      cutoff := now() - make_interval(days => keep_days);
      perform set_config('tracewell.audit_log_prune_before', cutoff::text, true);
      delete from audit_log where created_at < cutoff;
      get diagnostics removed = row_count;
      perform set_config('tracewell.audit_log_prune_before', '', true);
      return removed;
    end $$`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function if exists prune_audit_log(integer)`.execute(db)
  await sql`drop table if exists audit_log`.execute(db)
  await sql`drop function if exists audit_log_append_only()`.execute(db)
}
