import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// Single sign-on (docs/accounts.md#single-sign-on).
// - team_sso_settings: a team's own OpenID Connect provider and/or SAML identity provider, who
//   may join through them (allowed email domains, the default role, a claim mapped to roles), and
//   whether its members may still sign in with a password. The OIDC client secret is kept sealed
//   (AES-256-GCM under LLM_CONNECTION_ENCRYPTION_KEY), never in clear.
// - sso_identities: which account a provider's subject signed in as, so that a later sign-in
//   finds the same account even when the email at the provider changed.
// - sso_attempts: one row per sign-in started, consumed (deleted) by its callback: a replayed
//   callback or assertion finds nothing. `browser_hash` binds an OIDC attempt to the browser that
//   started it (the SHA-256 of a cookie it got), so nobody can sign a victim into their account.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table team_sso_settings (
      team_id text primary key references teams (id) on delete cascade,
      oidc_issuer text,
      oidc_client_id text,
      oidc_client_secret_sealed text,
      oidc_display_name text,
      saml_entry_point text,
      saml_idp_issuer text,
      saml_idp_certificate text,
      saml_display_name text,
      allowed_domains text[] not null default '{}',
      default_role text not null default 'viewer' check (default_role in ('owner', 'admin', 'member', 'viewer')),
      role_claim text,
      role_map jsonb not null default '{}',
      password_sign_in boolean not null default true,
      updated_at timestamptz not null default now(),
      check ((oidc_issuer is null) = (oidc_client_id is null)),
      check ((saml_entry_point is null) = (saml_idp_certificate is null))
    )`.execute(db)

  await sql`
    create table sso_identities (
      provider text not null,
      subject text not null,
      user_id text not null references users (id) on delete cascade,
      created_at timestamptz not null default now(),
      last_sign_in_at timestamptz not null default now(),
      primary key (provider, subject)
    )`.execute(db)
  await sql`create index sso_identities_user_idx on sso_identities (user_id)`.execute(db)

  await sql`
    create table sso_attempts (
      id text primary key,
      protocol text not null check (protocol in ('oidc', 'saml')),
      team_id text references teams (id) on delete cascade,
      browser_hash text,
      code_verifier text,
      nonce text,
      return_to text not null default '/',
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    )`.execute(db)
  await sql`create index sso_attempts_expires_idx on sso_attempts (expires_at)`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['sso_attempts', 'sso_identities', 'team_sso_settings']) await db.schema.dropTable(table).ifExists().execute()
}
