import { sql } from 'kysely'
import type { Executor } from './executor.ts'

// Sign-ins started at an identity provider (docs/accounts.md#single-sign-on), each consumed once
// by its callback: taking one deletes it, so a replayed callback or assertion finds nothing, on
// every replica.

export interface SsoAttempt {
  /** OIDC: the state; SAML: the AuthnRequest's ID. */
  id: string
  protocol: 'oidc' | 'saml'
  /** The team whose provider it is; null for the install's own (OIDC_ISSUER). */
  teamId: string | null
  /** SHA-256 of the cookie the starting browser got (OIDC); null for SAML, whose answer is a cross-site POST that carries no Lax cookie. */
  browserHash: string | null
  codeVerifier: string | null
  nonce: string | null
  /** The console path to land on once signed in. */
  returnTo: string
}

/** Records a started sign-in for `ttlMs`, and forgets those that were never finished. */
export async function createSsoAttempt(db: Executor, attempt: SsoAttempt, ttlMs: number): Promise<void> {
  await db.deleteFrom('sso_attempts').where('expires_at', '<', sql<Date>`now()`).execute()
  await db
    .insertInto('sso_attempts')
    .values({
      id: attempt.id,
      protocol: attempt.protocol,
      team_id: attempt.teamId,
      browser_hash: attempt.browserHash,
      code_verifier: attempt.codeVerifier,
      nonce: attempt.nonce,
      return_to: attempt.returnTo,
      expires_at: sql<Date>`now() + make_interval(secs => ${ttlMs / 1000})`,
    })
    .execute()
}

/** Takes (deletes and returns) a live attempt; undefined when unknown, used, expired or of the other protocol. */
export async function takeSsoAttempt(db: Executor, id: string, protocol: SsoAttempt['protocol']): Promise<SsoAttempt | undefined> {
  const row = await db
    .deleteFrom('sso_attempts')
    .where('id', '=', id)
    .where('protocol', '=', protocol)
    .returningAll()
    .executeTakeFirst()
  if (row === undefined || row.expires_at.getTime() <= Date.now()) return undefined
  return { id: row.id, protocol: row.protocol, teamId: row.team_id, browserHash: row.browser_hash, codeVerifier: row.code_verifier, nonce: row.nonce, returnTo: row.return_to }
}

/** Whether an attempt is live, without taking it (SAML's request cache asks before validating). */
export async function ssoAttemptIsLive(db: Executor, id: string, protocol: SsoAttempt['protocol']): Promise<boolean> {
  const row = await db.selectFrom('sso_attempts').select('id').where('id', '=', id).where('protocol', '=', protocol).where('expires_at', '>', sql<Date>`now()`).executeTakeFirst()
  return row !== undefined
}
