/**
 * What a console session cookie says, before it is signed: who signed in with which team key,
 * and until when. Never the key itself: a stolen cookie is worth no more than the session, and it
 * stops working when the key it names is revoked.
 */
export interface SessionClaims {
  /** Random, per sign-in: what a sign-out revokes (session-revocations.ts). */
  sessionId: string
  teamId: string
  keyId: string
  /** Milliseconds since the Unix epoch. */
  expiresAt: number
}

export function encodeSessionClaims(claims: SessionClaims): string {
  return Buffer.from(JSON.stringify([claims.teamId, claims.keyId, claims.expiresAt, claims.sessionId])).toString('base64url')
}

/** The claims of a cookie value whose signature was already checked; null if it is not claims at all. */
export function decodeSessionClaims(value: string): SessionClaims | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'))
  } catch {
    return null
  }
  // Cookies of the release before sign-outs were revocable have no session id: they could never
  // be signed out, so they are refused and their users sign in again once.
  if (!Array.isArray(parsed) || parsed.length !== 4) return null
  const [teamId, keyId, expiresAt, sessionId] = parsed as unknown[]
  if (typeof teamId !== 'string' || typeof keyId !== 'string' || typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) return null
  if (typeof sessionId !== 'string' || !/^[A-Za-z0-9_-]{16,64}$/.test(sessionId)) return null
  return { sessionId, teamId, keyId, expiresAt }
}
