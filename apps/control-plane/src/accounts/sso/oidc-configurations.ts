import { createHash } from 'node:crypto'
import type { Outbound } from '@tracewell/outbound'
import type * as Oidc from 'openid-client'
import type { OidcProviderSettings } from './sso-options.ts'

// openid-client Configurations (a provider's discovered metadata and our client at it), one per
// provider, kept a few minutes so that a sign-in does not read the discovery document twice. Every
// call to a provider goes through the outbound guard: a team's owner names its issuer, and must
// not be able to point the control plane at an internal address.

/**
 * openid-client and jose, loaded with the first OIDC request rather than with the control plane,
 * as node-saml is: most never see one (docs/benchmarks.md#at-rest). A broken install still fails
 * that first request loudly, naming the module.
 */
export const openIdClient = (): Promise<typeof Oidc> => import('openid-client')

/** How long discovered metadata is trusted; a provider that rotates endpoints is seen within it. */
const discoveryTtlMs = 5 * 60_000
/** One call to a provider (discovery, keys, token) at most. */
const providerCallTimeoutMs = 10_000

export class OidcConfigurations {
  readonly #fetch: Oidc.CustomFetch
  readonly #cache = new Map<string, { at: number; configuration: Promise<Oidc.Configuration> }>()

  constructor(outbound: Outbound) {
    const fetchWithin = outbound.fetchWithin(providerCallTimeoutMs)
    this.#fetch = (url, options) => fetchWithin(url, options as RequestInit)
  }

  /** The provider's Configuration; rejects when it cannot be reached or its discovery is not valid. */
  configurationOf(provider: Pick<OidcProviderSettings, 'issuer' | 'clientId' | 'clientSecret'>): Promise<Oidc.Configuration> {
    const key = createHash('sha256').update(JSON.stringify([provider.issuer, provider.clientId, provider.clientSecret])).digest('hex')
    const cached = this.#cache.get(key)
    if (cached !== undefined && Date.now() - cached.at < discoveryTtlMs) return cached.configuration
    const configuration = this.#discover(provider)
    this.#cache.set(key, { at: Date.now(), configuration })
    configuration.catch(() => this.#cache.delete(key))
    return configuration
  }

  async #discover(provider: Pick<OidcProviderSettings, 'issuer' | 'clientId' | 'clientSecret'>): Promise<Oidc.Configuration> {
    const oidc = await openIdClient()
    const clientAuth = provider.clientSecret === null ? oidc.None() : oidc.ClientSecretBasic(provider.clientSecret)
    // http:// issuers are for providers on a private network or a developer's machine; openid-client
    // refuses them unless told.
    const execute = [oidc.enableNonRepudiationChecks, ...(provider.issuer.startsWith('http:') ? [oidc.allowInsecureRequests] : [])]
    return oidc.discovery(new URL(provider.issuer), provider.clientId, undefined, clientAuth, { [oidc.customFetch]: this.#fetch, execute })
  }
}

/** An error with its causes, one line: openid-client's own messages name the check that failed. */
export function errorChainMessage(error: unknown): string {
  const messages: string[] = []
  for (let at: unknown = error; at instanceof Error; at = at.cause) messages.push(at.message)
  return messages.join(': ') || String(error)
}
