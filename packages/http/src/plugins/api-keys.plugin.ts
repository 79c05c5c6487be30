import { ApiKeyVerifier } from '@tracewell/auth'
import { findApiKeyIdentitiesByHashes, touchApiKeys } from '@tracewell/db'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    apiKeys: ApiKeyVerifier
  }
}

export interface ApiKeysPluginOptions {
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
      lookupMany: (keyHashes) => findApiKeyIdentitiesByHashes(app.db, keyHashes),
      touch: (ids, usedAt) => touchApiKeys(app.db, ids, usedAt),
    })
    app.decorate('apiKeys', verifier)
    app.addHook('onClose', async () => verifier.close().catch((err: unknown) => app.log.warn({ err }, 'could not record key usage')))
  },
  { name: 'api-keys', fastify: '5.x', dependencies: ['db'] },
)
