import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** Readable kind prefixes, so a leaked key says what it is. */
const keyPrefixes = { project: 'tw_proj_', team: 'tw_team_' } as const
export type KeyKind = keyof typeof keyPrefixes

const secretBytes = 32

/** A new secret: 32 random bytes, base64url, behind the kind prefix. Shown once, never stored. */
export function generateApiKey(kind: KeyKind): string {
  return keyPrefixes[kind] + randomBytes(secretBytes).toString('base64url')
}

/** What is stored and looked up instead of the secret. */
export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

/**
 * A short prefix that lets a person recognise a key in a list without revealing it: the kind
 * prefix and four characters, or the first eight characters of a key carried over from elsewhere.
 */
export function displayPrefix(secret: string): string {
  const kindPrefix = Object.values(keyPrefixes).find((prefix) => secret.startsWith(prefix))
  return kindPrefix ? secret.slice(0, kindPrefix.length + 4) : secret.slice(0, 8)
}

/**
 * Compares a presented shared secret (cron key, admin key) with the configured one in time that
 * depends on neither's content nor length: both are hashed to 32 bytes first.
 */
export function secretsMatch(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest()
  const b = createHash('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}
