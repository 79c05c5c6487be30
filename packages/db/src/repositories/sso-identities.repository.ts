import { sql } from 'kysely'
import type { Executor } from './executor.ts'

// Which account a provider's subject is (docs/accounts.md#single-sign-on). A provider is named
// `oidc` (the install's own, OIDC_ISSUER), `oidc:<teamId>:<issuer>` or `saml:<teamId>:<IdP
// entity id>` (a team's own): the same subject at two providers is two identities.

/** The account this provider's subject signed in as before; undefined the first time. */
export async function findSsoIdentityUser(db: Executor, provider: string, subject: string): Promise<string | undefined> {
  const row = await db.selectFrom('sso_identities').select('user_id').where('provider', '=', provider).where('subject', '=', subject).executeTakeFirst()
  return row?.user_id
}

/** Records (or refreshes) that this provider's subject is this account. */
export async function linkSsoIdentity(db: Executor, provider: string, subject: string, userId: string): Promise<void> {
  await db
    .insertInto('sso_identities')
    .values({ provider, subject, user_id: userId })
    .onConflict((oc) => oc.columns(['provider', 'subject']).doUpdateSet({ last_sign_in_at: sql`now()` }))
    .execute()
}
