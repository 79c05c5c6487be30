import { createHash, randomBytes } from 'node:crypto'

// The bearer tokens a person holds for a while: a session cookie, an invitation link, a password
// reset link, the setup link. 32 random bytes (base64url, safe in a URL and a cookie); the
// database keeps only their SHA-256, so a copy of it cannot be replayed as tokens.

export interface SecretToken {
  /** Shown or sent once, never stored. */
  token: string
  /** What is stored and looked up, hex. */
  tokenHash: string
}

export function secretTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

export function newSecretToken(): SecretToken {
  const token = randomBytes(32).toString('base64url')
  return { token, tokenHash: secretTokenHash(token) }
}
