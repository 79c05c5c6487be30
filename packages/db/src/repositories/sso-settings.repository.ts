import { sql, type Selectable } from 'kysely'
import type { TeamSsoSettingsTable } from '../database.ts'
import type { Executor } from './executor.ts'
import type { TeamRoleName } from './team-members.repository.ts'

// A team's own single sign-on (docs/accounts.md#single-sign-on): its OpenID Connect provider,
// its SAML identity provider, who may join through them, and whether its members may still sign
// in with a password. The OIDC client secret is stored sealed; the caller seals and opens it.

export interface TeamOidcSettings {
  issuer: string
  clientId: string
  /** sealSecret(…, ssoClientSecretContext(teamId)); null for a public client (PKCE alone). */
  clientSecretSealed: string | null
  displayName: string
}

export interface TeamSamlSettings {
  entryPoint: string
  /** The IdP's entity id, checked against the Issuer of its responses when set. */
  idpIssuer: string | null
  idpCertificate: string
  displayName: string
}

export interface TeamSsoSettings {
  teamId: string
  oidc: TeamOidcSettings | null
  saml: TeamSamlSettings | null
  allowedDomains: string[]
  defaultRole: TeamRoleName
  roleClaim: string | null
  roleMap: Record<string, TeamRoleName>
  passwordSignIn: boolean
  updatedAt: string
}

export type TeamSsoSettingsInput = Omit<TeamSsoSettings, 'teamId' | 'updatedAt'>

/** What a team's sealed client secret is bound to: it opens for that team's settings only. */
export const ssoClientSecretContext = (teamId: string) => `sso-oidc-client-secret:${teamId}`

type SettingsRow = Selectable<TeamSsoSettingsTable>

function toSettings(row: SettingsRow): TeamSsoSettings {
  return {
    teamId: row.team_id,
    oidc:
      row.oidc_issuer !== null && row.oidc_client_id !== null
        ? { issuer: row.oidc_issuer, clientId: row.oidc_client_id, clientSecretSealed: row.oidc_client_secret_sealed, displayName: row.oidc_display_name ?? 'Single sign-on' }
        : null,
    saml:
      row.saml_entry_point !== null && row.saml_idp_certificate !== null
        ? { entryPoint: row.saml_entry_point, idpIssuer: row.saml_idp_issuer, idpCertificate: row.saml_idp_certificate, displayName: row.saml_display_name ?? 'SAML single sign-on' }
        : null,
    allowedDomains: row.allowed_domains,
    defaultRole: row.default_role,
    roleClaim: row.role_claim,
    roleMap: row.role_map,
    passwordSignIn: row.password_sign_in,
    updatedAt: row.updated_at.toISOString(),
  }
}

/** A team's settings; undefined when it never set any (no providers, passwords allowed). */
export async function findTeamSsoSettings(db: Executor, teamId: string): Promise<TeamSsoSettings | undefined> {
  const row = await db.selectFrom('team_sso_settings').selectAll().where('team_id', '=', teamId).executeTakeFirst()
  return row && toSettings(row)
}

/** Replaces a team's settings whole. */
export async function putTeamSsoSettings(db: Executor, teamId: string, settings: TeamSsoSettingsInput): Promise<TeamSsoSettings> {
  const values = {
    oidc_issuer: settings.oidc?.issuer ?? null,
    oidc_client_id: settings.oidc?.clientId ?? null,
    oidc_client_secret_sealed: settings.oidc?.clientSecretSealed ?? null,
    oidc_display_name: settings.oidc?.displayName ?? null,
    saml_entry_point: settings.saml?.entryPoint ?? null,
    saml_idp_issuer: settings.saml?.idpIssuer ?? null,
    saml_idp_certificate: settings.saml?.idpCertificate ?? null,
    saml_display_name: settings.saml?.displayName ?? null,
    allowed_domains: settings.allowedDomains,
    default_role: settings.defaultRole,
    role_claim: settings.roleClaim,
    role_map: JSON.stringify(settings.roleMap),
    password_sign_in: settings.passwordSignIn,
    updated_at: sql<Date>`now()`,
  }
  const row = await db
    .insertInto('team_sso_settings')
    .values({ team_id: teamId, ...values })
    .onConflict((oc) => oc.column('team_id').doUpdateSet(values))
    .returningAll()
    .executeTakeFirstOrThrow()
  return toSettings(row)
}

export interface TeamSsoProvider {
  teamId: string
  protocol: 'oidc' | 'saml'
  displayName: string
}

/** Every team's configured providers, for the sign-in page's buttons. */
export async function listTeamSsoProviders(db: Executor): Promise<TeamSsoProvider[]> {
  const rows = await db
    .selectFrom('team_sso_settings')
    .innerJoin('teams', 'teams.id', 'team_sso_settings.team_id')
    .select(['team_sso_settings.team_id', 'oidc_issuer', 'oidc_display_name', 'saml_entry_point', 'saml_display_name'])
    .where((eb) => eb.or([eb('oidc_issuer', 'is not', null), eb('saml_entry_point', 'is not', null)]))
    .orderBy('teams.created_at')
    .orderBy('teams.id')
    .execute()
  return rows.flatMap((row) => [
    ...(row.oidc_issuer === null ? [] : [{ teamId: row.team_id, protocol: 'oidc' as const, displayName: row.oidc_display_name ?? 'Single sign-on' }]),
    ...(row.saml_entry_point === null ? [] : [{ teamId: row.team_id, protocol: 'saml' as const, displayName: row.saml_display_name ?? 'SAML single sign-on' }]),
  ])
}

/**
 * The first team that refuses this person a password sign-in: one whose settings turned password
 * sign-in off and where they are not an owner (owners keep it, the break-glass path when the
 * identity provider fails). undefined when every team of theirs allows it.
 */
export async function passwordSignInRefusedBy(db: Executor, userId: string): Promise<{ teamId: string; teamName: string } | undefined> {
  const row = await db
    .selectFrom('team_members')
    .innerJoin('team_sso_settings', 'team_sso_settings.team_id', 'team_members.team_id')
    .innerJoin('teams', 'teams.id', 'team_members.team_id')
    .select(['teams.id as teamId', 'teams.name as teamName'])
    .where('team_members.user_id', '=', userId)
    .where('team_members.role', '!=', 'owner')
    .where('team_sso_settings.password_sign_in', '=', false)
    .orderBy('team_members.created_at')
    .executeTakeFirst()
  return row
}
