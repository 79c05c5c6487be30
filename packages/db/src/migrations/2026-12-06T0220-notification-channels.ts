import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// Where a project's monitor notifications go (docs/api.md#notification-channels), and every
// notification sent to one of them. A webhook's signing secret is kept sealed (AES-256-GCM with
// LLM_CONNECTION_ENCRYPTION_KEY, like an LLM connection's key): it must be read again to sign.
// A delivery carries its payload (the message as it was when the event happened), so a monitor
// renamed or deleted later changes nothing already queued. One delivery per (event, channel): the
// outbox turns an event into deliveries with ON CONFLICT DO NOTHING, so however many evaluator
// replicas do it, or however often, each channel hears of an event once. event_id is no foreign
// key: a monitor event may be pruned while its delivery log is kept. Test messages have no event.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table notification_channels (
      id text primary key default gen_random_uuid()::text,
      project_id text not null references projects (id) on delete cascade,
      name text not null,
      type text not null check (type in ('webhook', 'slack', 'email')),
      url text,
      address text,
      secret_sealed text,
      secret_hint text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint notification_channels_name_unique unique (project_id, name),
      constraint notification_channels_target check (
        (type in ('webhook', 'slack') and url is not null and address is null)
        or (type = 'email' and address is not null and url is null)
      ),
      constraint notification_channels_secret check ((type = 'webhook') = (secret_sealed is not null))
    )`.execute(db)
  await sql`
    create table notification_deliveries (
      id text primary key default gen_random_uuid()::text,
      channel_id text not null references notification_channels (id) on delete cascade,
      event_id text,
      kind text not null check (kind in ('event', 'test')),
      payload jsonb not null,
      status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      last_status integer,
      last_error text,
      created_at timestamptz not null default now(),
      delivered_at timestamptz,
      constraint notification_deliveries_event_channel unique (event_id, channel_id),
      constraint notification_deliveries_event check ((kind = 'event') = (event_id is not null))
    )`.execute(db)
  // What the delivery worker claims: the due pending ones, soonest first.
  await sql`create index notification_deliveries_due_idx on notification_deliveries (next_attempt_at) where status = 'pending'`.execute(db)
  await sql`create index notification_deliveries_channel_idx on notification_deliveries (channel_id, created_at desc, id desc)`.execute(db)
  await sql`
    create table notification_attempts (
      id bigint generated always as identity primary key,
      delivery_id text not null references notification_deliveries (id) on delete cascade,
      attempted_at timestamptz not null default now(),
      ok boolean not null,
      http_status integer,
      error text,
      duration_ms integer not null
    )`.execute(db)
  await sql`create index notification_attempts_delivery_idx on notification_attempts (delivery_id, attempted_at)`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('notification_attempts').ifExists().execute()
  await db.schema.dropTable('notification_deliveries').ifExists().execute()
  await db.schema.dropTable('notification_channels').ifExists().execute()
}
