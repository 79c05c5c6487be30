import { ApiKeyVerifier, FailedKeyAttempts, type ApiKeyVerifierOptions, type VerifiedKey } from '@tracewell/auth'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { keyStoreUnavailable, TooManyRequestsError } from '../errors.ts'

declare module 'fastify' {
  interface FastifyInstance {
    apiKeys: ApiKeyVerifier
    /** Failed key checks per client address, which slow the next ones (answerFailedKey). */
    failedKeys: FailedKeyAttempts
  }
}

/** Where keys are looked up and their use recorded: the database, in a service (@tracewell/service's apiKeyStore). */
export type ApiKeyStore = Pick<ApiKeyVerifierOptions, 'lookupMany' | 'touch'>

export interface ApiKeysPluginOptions {
  store: ApiKeyStore
  /** How long a verified key is trusted (KEY_CACHE_TTL_MS, at most 5 s). */
  ttlMs: number
  /** How long keys verified before a database outage keep working during it (KEY_OUTAGE_GRACE_MS). */
  outageGraceMs?: number
}

/** The cached API key verifier as `app.apiKeys`; key usage is flushed when the app closes. */
export const apiKeysPlugin = fp<ApiKeysPluginOptions>(
  async (app, options) => {
    const verifier = new ApiKeyVerifier({
      ttlMs: options.ttlMs,
      outageGraceMs: options.outageGraceMs,
      lookupMany: options.store.lookupMany,
      touch: options.store.touch,
    })
    app.decorate('apiKeys', verifier)
    app.decorate('failedKeys', new FailedKeyAttempts())
    app.addHook('onClose', async () => verifier.close().catch((err: unknown) => app.log.warn({ err }, 'could not record key usage')))
  },
  { name: 'api-keys', fastify: '5.x' },
)

/**
 * A presented key looked up in the key store (its cache missed): its identity, or null when it is
 * unknown or revoked. Every service and transport maps a failed lookup here, and only here: the
 * key may well be fine, so the answer is keyStoreUnavailable (503 with Retry-After), never a 401
 * or a 500. Callers go through `verifyPresentedKey`, which tries the cache first.
 */
export async function lookUpKey(app: FastifyInstance, secret: string, log: FastifyBaseLogger = app.log): Promise<VerifiedKey | null> {
  try {
    return await app.apiKeys.verify(secret)
  } catch (error) {
    log.warn({ err: error }, 'API key lookup failed')
    throw keyStoreUnavailable()
  }
}

/**
 * The identity of a key presented by `secret`: from the cache without a promise when it was
 * verified a moment ago (a measurable share of a small request), else looked up (lookUpKey).
 */
export function verifyPresentedKey(app: FastifyInstance, secret: string, log?: FastifyBaseLogger): VerifiedKey | null | Promise<VerifiedKey | null> {
  const cached = app.apiKeys.verifyCached(secret)
  return cached !== undefined ? cached : lookUpKey(app, secret, log)
}

/**
 * Resolves when the answer to a key that failed its check (unknown, revoked, a wrong secret) from
 * `address` may be sent, or rejects with a 429 once the address has failed too often: every place
 * that checks a presented secret calls this after the check failed, never before it, so a correct
 * key is always admitted whatever its address has done (@tracewell/auth's FailedKeyAttempts).
 */
export function answerFailedKey(app: FastifyInstance, address: string): Promise<void> {
  const verdict = app.failedKeys.failed(address)
  if ('retryAfterSeconds' in verdict) {
    return Promise.reject(
      new TooManyRequestsError(`Too many failed key checks from this address; retry after ${verdict.retryAfterSeconds} s`, verdict.retryAfterSeconds),
    )
  }
  if (verdict.waitMs === 0) return Promise.resolve()
  return new Promise((resolve) => setTimeout(resolve, verdict.waitMs))
}
