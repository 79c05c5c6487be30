import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// Working on traces together (docs/collaboration.md):
// - comments on a trace, span, session, prompt version or dataset item; a reply names its thread's
//   first comment, and resolving marks that first comment. Deleting the first comment deletes
//   its thread. Mentions are the user ids the text names, each told once (user_notifications).
// - annotation queues and their items: `next` takes the first item nobody holds (or whose hold
//   expired) with FOR UPDATE SKIP LOCKED, so two people never get the same one; a skipped item
//   goes to the back (a new position).
// - saved views of the trace list, private or shared, and one default view per person and project.
// - share links: the token's SHA-256 opens one trace, read-only, until expiry or revocation.
// - evaluators may send what they scored below a value to a queue.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table comments (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      object_type text not null check (object_type in ('trace', 'span', 'session', 'prompt', 'dataset_item')),
      object_id text not null,
      thread_id text references comments (id) on delete cascade,
      author_user_id text references users (id) on delete set null,
      body text not null,
      mentions text[] not null default '{}',
      resolved_at timestamptz,
      resolved_by_user_id text references users (id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index comments_object_idx on comments (project_id, object_type, object_id, created_at, id)`.execute(db)

  await sql`
    create table user_notifications (
      id text primary key default gen_random_uuid()::text,
      user_id text not null references users (id) on delete cascade,
      project_id text not null references projects (id) on delete cascade,
      kind text not null check (kind in ('mention')),
      comment_id text references comments (id) on delete cascade,
      created_at timestamptz not null default now(),
      read_at timestamptz
    )`.execute(db)
  await sql`create index user_notifications_user_idx on user_notifications (user_id, created_at desc)`.execute(db)

  await sql`
    create table annotation_queues (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      name text not null,
      description text not null default '',
      score_config_ids text[] not null default '{}',
      assignee_ids text[] not null default '{}',
      created_by_user_id text references users (id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index annotation_queues_project_idx on annotation_queues (project_id, created_at, id)`.execute(db)

  await sql`create sequence annotation_queue_item_position`.execute(db)
  await sql`
    create table annotation_queue_items (
      id text primary key default gen_random_uuid()::text,
      queue_id text not null references annotation_queues (id) on delete cascade,
      object_type text not null check (object_type in ('trace', 'span', 'session')),
      object_id text not null,
      position bigint not null default nextval('annotation_queue_item_position'),
      status text not null default 'pending' check (status in ('pending', 'completed')),
      held_by_user_id text references users (id) on delete set null,
      held_until timestamptz,
      completed_by_user_id text references users (id) on delete set null,
      completed_at timestamptz,
      created_at timestamptz not null default now(),
      unique (queue_id, object_type, object_id)
    )`.execute(db)
  await sql`create index annotation_queue_items_next_idx on annotation_queue_items (queue_id, position) where status = 'pending'`.execute(db)

  await sql`
    create table saved_views (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      owner_user_id text not null references users (id) on delete cascade,
      name text not null,
      shared boolean not null default false,
      state jsonb not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index saved_views_project_idx on saved_views (project_id, name, id)`.execute(db)
  await sql`
    create table saved_view_defaults (
      user_id text not null references users (id) on delete cascade,
      project_id text not null references projects (id) on delete cascade,
      view_id text not null references saved_views (id) on delete cascade,
      primary key (user_id, project_id)
    )`.execute(db)

  await sql`
    create table trace_shares (
      token_hash text primary key,
      id text not null unique default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      trace_id text not null,
      created_by_user_id text references users (id) on delete set null,
      created_by_key_id text,
      created_at timestamptz not null default now(),
      expires_at timestamptz,
      revoked_at timestamptz
    )`.execute(db)
  await sql`create index trace_shares_trace_idx on trace_shares (project_id, trace_id)`.execute(db)

  // An evaluator may send the traces it scored below a value to a queue, for people to look at.
  await sql`alter table evaluators add column review_queue_id text references annotation_queues (id) on delete set null`.execute(db)
  await sql`alter table evaluators add column review_below double precision`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table evaluators drop column if exists review_below, drop column if exists review_queue_id`.execute(db)
  for (const table of ['trace_shares', 'saved_view_defaults', 'saved_views', 'annotation_queue_items', 'annotation_queues', 'user_notifications', 'comments']) {
    await db.schema.dropTable(table).ifExists().execute()
  }
  await sql`drop sequence if exists annotation_queue_item_position`.execute(db)
}
