import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// Prompt labels: a named pointer (`production`, `staging`, a team's own) at one version of a
// registry, and the history of its moves. `production` is what the `live` flag meant.
//
// Rolled out without downtime in two steps (expand, then contract):
//
// 1. This migration adds the tables, copies every live prompt into a `production` label, and
//    keeps `prompts.live` and the `production` label in step in both directions with triggers,
//    so that instances of the previous release (which read and write `live`) and label-aware
//    instances (which read and write labels only) can serve side by side during a rolling
//    deploy, each seeing the other's changes at once.
// 2. Once no instance of the previous release runs, a later migration drops the triggers, the
//    `prompts_one_live_per_promptset` index and the `live` column. Label-aware code never reads
//    or writes `live` (the API's `live` field is derived from the `production` label), so that
//    step needs no code change.
//
// The migrator applies pending migrations in one transaction. `prompts` is locked against writes
// (reads go on) before the copy, so that no `live` change made by a running instance can slip
// between the copy and the triggers that would otherwise mirror it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`lock table prompts in share row exclusive mode`.execute(db)

  await db.schema
    .createTable('prompt_labels')
    .addColumn('promptset_id', 'text', (col) => col.notNull().references('promptsets.id').onDelete('cascade'))
    // `.` and `..` match the pattern but cannot be a URL path segment (clients resolve them away).
    .addColumn('name', 'text', (col) => col.notNull().check(sql`name ~ '^[a-z0-9_.-]{1,36}$' and name not in ('.', '..')`))
    .addColumn('version', 'integer', (col) => col.notNull())
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    // One version per label per registry: a label is a row, and its key is (registry, name).
    .addPrimaryKeyConstraint('prompt_labels_pkey', ['promptset_id', 'name'])
    // Through (registry, version), so a label can only point at a version of its own registry.
    .addForeignKeyConstraint('prompt_labels_version_fkey', ['promptset_id', 'version'], 'prompts', ['promptset_id', 'version'], (fk) => fk.onDelete('cascade'))
    .execute()
  // "Which labels does this version carry", and the foreign key's cascade.
  await db.schema.createIndex('prompt_labels_promptset_id_version_idx').on('prompt_labels').columns(['promptset_id', 'version']).execute()

  await db.schema
    .createTable('prompt_label_moves')
    // Orders the history: moves of one registry are serialised, so a later move has a larger id
    // even when its transaction started earlier.
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('promptset_id', 'text', (col) => col.notNull().references('promptsets.id').onDelete('cascade'))
    .addColumn('label', 'text', (col) => col.notNull())
    // null: the label did not exist before (from) or was removed (to).
    .addColumn('from_version', 'integer')
    .addColumn('to_version', 'integer')
    // The key that moved it, kept as text without a foreign key so that the history outlives a
    // deleted key; null for moves made outside the API (a pre-label instance, by hand).
    .addColumn('moved_by_key_id', 'text')
    .addColumn('moved_by_key_prefix', 'text')
    // The wall clock of the move, not of its transaction's start (a move may wait for another).
    .addColumn('moved_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`clock_timestamp()`))
    .addCheckConstraint('prompt_label_moves_changes_check', sql`from_version is distinct from to_version`)
    .execute()
  await db.schema.createIndex('prompt_label_moves_promptset_id_id_idx').on('prompt_label_moves').columns(['promptset_id', 'id']).execute()

  await sql`
    insert into prompt_labels (promptset_id, name, version, updated_at)
    select promptset_id, 'production', version, updated_at from prompts where live
  `.execute(db)

  // Label-aware code moved `production`: mirror it into `live` for the previous release's readers.
  // pg_trigger_depth() > 1 means the change came from the other trigger: nothing to mirror back.
  await sql`
    create function prompt_labels_mirror_production_to_live() returns trigger language plpgsql as $$
    begin
      if pg_trigger_depth() > 1 then return null; end if;
      if tg_op in ('UPDATE', 'DELETE') and old.name = 'production' then
        update prompts set live = false where promptset_id = old.promptset_id and version = old.version and live;
      end if;
      if tg_op in ('INSERT', 'UPDATE') and new.name = 'production' then
        -- Any other live row first: the one-live-per-registry index is checked row by row.
        update prompts set live = false where promptset_id = new.promptset_id and version <> new.version and live;
        update prompts set live = true where promptset_id = new.promptset_id and version = new.version and not live;
      end if;
      return null;
    end
    $$
  `.execute(db)
  await sql`
    create trigger prompt_labels_mirror_production_to_live
    after insert or update or delete on prompt_labels
    for each row execute function prompt_labels_mirror_production_to_live()
  `.execute(db)

  // The previous release changed `live`: move `production` to match, and record the move (by no
  // key: that release does not know about labels). Clearing one live row and setting another, as
  // it does, shows in the history as a removal followed by a move.
  await sql`
    create function prompts_mirror_live_to_production() returns trigger language plpgsql as $$
    declare
      previous integer;
    begin
      if pg_trigger_depth() > 1 or (tg_op = 'INSERT' and not new.live) then return null; end if;
      select version into previous from prompt_labels where promptset_id = new.promptset_id and name = 'production' for update;
      if new.live and previous is distinct from new.version then
        insert into prompt_labels (promptset_id, name, version, updated_at) values (new.promptset_id, 'production', new.version, clock_timestamp())
        on conflict (promptset_id, name) do update set version = excluded.version, updated_at = excluded.updated_at;
        insert into prompt_label_moves (promptset_id, label, from_version, to_version) values (new.promptset_id, 'production', previous, new.version);
      elsif not new.live and previous = new.version then
        delete from prompt_labels where promptset_id = new.promptset_id and name = 'production';
        insert into prompt_label_moves (promptset_id, label, from_version, to_version) values (new.promptset_id, 'production', previous, null);
      end if;
      return null;
    end
    $$
  `.execute(db)
  await sql`
    create trigger prompts_mirror_live_to_production
    after insert or update of live on prompts
    for each row execute function prompts_mirror_live_to_production()
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // `live` has been kept in step with `production` all along; the other labels are lost.
  await sql`drop trigger if exists prompts_mirror_live_to_production on prompts`.execute(db)
  await sql`drop function if exists prompts_mirror_live_to_production()`.execute(db)
  await db.schema.dropTable('prompt_label_moves').ifExists().execute()
  await db.schema.dropTable('prompt_labels').ifExists().execute()
  await sql`drop function if exists prompt_labels_mirror_production_to_live()`.execute(db)
}
