import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// How people come in (docs/accounts.md#invitations-and-members): invitations to a team, password
// resets, and the one-time setup link of a fresh install. Every one is a link whose random token
// is shown once (mailed, printed or copied); the table keeps only its SHA-256, so a copy of the
// database cannot be turned into links. Each is used at most once (`accepted_at`, `used_at`).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table invitations (
      id text primary key default gen_random_uuid()::text,
      team_id text not null references teams (id) on delete cascade,
      email text not null,
      role text not null check (role in ('owner', 'admin', 'member', 'viewer')),
      project_roles jsonb not null default '[]',
      token_hash text not null unique,
      invited_by_user_id text references users (id) on delete set null,
      mailed boolean not null default false,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      accepted_at timestamptz,
      accepted_by_user_id text references users (id) on delete set null,
      revoked_at timestamptz
    )`.execute(db)
  await sql`create index invitations_open_idx on invitations (team_id, lower(email)) where accepted_at is null and revoked_at is null`.execute(db)

  await sql`
    create table password_resets (
      token_hash text primary key,
      user_id text not null references users (id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db)
  await sql`create index password_resets_user_idx on password_resets (user_id)`.execute(db)

  await sql`
    create table setup_links (
      token_hash text primary key,
      created_at timestamptz not null default now(),
      used_at timestamptz
    )`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['setup_links', 'password_resets', 'invitations']) await db.schema.dropTable(table).ifExists().execute()
}
