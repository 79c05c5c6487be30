import type { CacheProvider, Profile, SAML } from '@node-saml/node-saml'
import type { TeamSamlSettings } from '@tracewell/db'
import type { AssertedIdentity } from './sso-accounts.ts'

// Tracewell as a SAML 2.0 service provider of one team (docs/accounts.md#single-sign-on), with
// @node-saml/node-saml: SP-initiated sign-in only (an unsolicited, IdP-initiated response has no
// request to answer and is refused, as a replayed one is), assertions must be signed by the
// team's IdP certificate, addressed to this team's entity id, and in their validity window.

/** How long a started SAML sign-in may take at the IdP. */
export const samlAttemptTtlMs = 10 * 60_000

export const samlPaths = (teamId: string) => ({
  metadata: `/api/auth/saml/${encodeURIComponent(teamId)}/metadata`,
  login: `/api/auth/saml/${encodeURIComponent(teamId)}/login`,
  acs: `/api/auth/saml/${encodeURIComponent(teamId)}/acs`,
})

/**
 * The team's service provider; `requests` keeps the ids of the AuthnRequests it sent
 * (InResponseTo). node-saml and its XML libraries load on the first SAML request, not with the
 * control plane: most never see one (docs/benchmarks.md#at-rest).
 */
export async function samlServiceProvider(publicUrl: string, teamId: string, settings: TeamSamlSettings, requests: CacheProvider): Promise<SAML> {
  const { SAML, ValidateInResponseTo } = await import('@node-saml/node-saml')
  const paths = samlPaths(teamId)
  const entityId = `${publicUrl}${paths.metadata}`
  return new SAML({
    entryPoint: settings.entryPoint,
    idpCert: settings.idpCertificate,
    ...(settings.idpIssuer === null ? {} : { idpIssuer: settings.idpIssuer }),
    issuer: entityId,
    audience: entityId,
    callbackUrl: `${publicUrl}${paths.acs}`,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: samlAttemptTtlMs,
    cacheProvider: requests,
    acceptedClockSkewMs: 30_000,
    identifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    // ADFS refuses a request that names an authentication context it does not offer.
    disableRequestedAuthnContext: true,
  })
}

const emailAttributes = ['email', 'mail', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress', 'urn:oid:0.9.2342.19200300.100.1.3']
const nameAttributes = ['displayName', 'name', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name', 'urn:oid:2.16.840.1.113730.3.1.241']

/**
 * What a verified assertion says about the person. SAML has no email_verified: the team's own IdP
 * vouches for the address it asserts (and a team's provider only reaches its own members), unless
 * it sends an `email_verified` attribute of false.
 */
export function samlIdentity(profile: Profile): AssertedIdentity {
  const first = (names: string[]) => names.map((name) => profile[name]).map((value) => (Array.isArray(value) ? value[0] : value)).find((value): value is string => typeof value === 'string' && value !== '')
  const email = first(emailAttributes) ?? (profile.nameIDFormat.endsWith(':emailAddress') ? profile.nameID : undefined)
  const verified = first(['email_verified'])
  return { subject: profile.nameID, email, emailVerified: verified === undefined || verified.toLowerCase() === 'true', name: first(nameAttributes), claims: profile as Record<string, unknown> }
}
