import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// Accounts (docs/accounts.md): people, their roles on teams and projects, and their sessions.
// - Emails are unique without regard to case (the index on lower(email)); the address is kept as
//   typed. A user made by single sign-on may have no password.
// - A project role overrides the team role for one person, higher or lower; `none` hides the
//   project from them.
// - Sessions are server-side so that any control-plane replica serves them and a sign-out ends
//   them everywhere at once: the cookie holds a random token, the row its SHA-256 (a stolen
//   database cannot be replayed as cookies).
// - API keys gain scopes (null: made before scopes, they keep every right they had), the person
//   who made them, and an expiry.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table users (
      id text primary key default gen_random_uuid()::text,
      email text not null,
      name text not null,
      password_hash text,
      email_verified boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      password_changed_at timestamptz
    )`.execute(db)
  await sql`create unique index users_email_idx on users (lower(email))`.execute(db)

  await sql`
    create table team_members (
      team_id text not null references teams (id) on delete cascade,
      user_id text not null references users (id) on delete cascade,
      role text not null check (role in ('owner', 'admin', 'member', 'viewer')),
      created_at timestamptz not null default now(),
      primary key (team_id, user_id)
    )`.execute(db)
  await sql`create index team_members_user_idx on team_members (user_id)`.execute(db)

  await sql`
    create table project_members (
      project_id text not null references projects (id) on delete cascade,
      user_id text not null references users (id) on delete cascade,
      role text not null check (role in ('owner', 'admin', 'member', 'viewer', 'none')),
      created_at timestamptz not null default now(),
      primary key (project_id, user_id)
    )`.execute(db)
  await sql`create index project_members_user_idx on project_members (user_id)`.execute(db)

  await sql`
    create table user_sessions (
      token_hash text primary key,
      id text not null unique default gen_random_uuid()::text,
      user_id text not null references users (id) on delete cascade,
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      expires_at timestamptz not null,
      ended_at timestamptz,
      ip text,
      user_agent text
    )`.execute(db)
  await sql`create index user_sessions_user_idx on user_sessions (user_id)`.execute(db)

  await sql`alter table api_keys add column scopes text[]`.execute(db)
  await sql`alter table api_keys add column created_by_user_id text references users (id) on delete set null`.execute(db)
  await sql`alter table api_keys add column expires_at timestamptz`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table api_keys drop column if exists expires_at, drop column if exists created_by_user_id, drop column if exists scopes`.execute(db)
  for (const table of ['user_sessions', 'project_members', 'team_members', 'users']) await db.schema.dropTable(table).ifExists().execute()
}
