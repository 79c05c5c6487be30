import { displayPrefix, generateApiKey, hashApiKey, type KeyKind } from '@tracewell/auth'
import { insertApiKey, type ApiKeyDto, type Executor } from '@tracewell/db'
import type { KeyScope as ProjectKeyScope } from '@tracewell/policy'

export interface KeyScope {
  teamId: string
  /** The project of a project key; null for a team key. */
  projectId: string | null
}

/** What a key may do and until when, and who made it; absent: every scope, no expiry, made by no person. */
export interface KeyTerms {
  scopes?: readonly ProjectKeyScope[] | null
  expiresAt?: Date | null
  createdByUserId?: string | null
}

/**
 * Stores a key of `kind` for `scope`: its hash and display prefix, never the secret. A new random
 * secret unless one is given (INIT_* keys carried over from elsewhere). Returns the secret, to be
 * shown once, and the stored key.
 */
export async function mintApiKey(db: Executor, kind: KeyKind, scope: KeyScope, secret = generateApiKey(kind), terms: KeyTerms = {}): Promise<{ secret: string; key: ApiKeyDto }> {
  const key = await insertApiKey(db, { kind, teamId: scope.teamId, projectId: scope.projectId, keyHash: hashApiKey(secret), prefix: displayPrefix(secret), ...terms })
  return { secret, key }
}
