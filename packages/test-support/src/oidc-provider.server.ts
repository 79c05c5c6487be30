import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'

// A real OpenID Connect provider (the `oidc-provider` package, with its own login and consent
// pages) for the single sign-on tests, on 127.0.0.1. Its issuer is a small proxy in front of it,
// which passes everything through unless a test asks it to misbehave at the token endpoint the
// way a broken or hostile provider (or someone in between) would: an ID token for another
// audience or already expired, both signed with the provider's own key, or one whose signature
// was tampered with.

export interface OidcTestAccount {
  email: string
  email_verified: boolean
  name: string
  groups?: string[]
}

export type TokenTampering = 'none' | 'wrong-audience' | 'expired' | 'tampered-signature'

export interface TestOidcProvider {
  issuer: string
  clientId: string
  clientSecret: string
  /** How the next token responses' ID tokens are altered (default none). */
  tampering: TokenTampering
  close(): Promise<void>
}

export interface TestOidcProviderOptions {
  /** The redirect URIs registered for the client. */
  redirectUris: string[]
  /** People by login name: any password signs them in on the provider's page. */
  accounts: Record<string, OidcTestAccount>
}

export async function startOidcProvider(options: TestOidcProviderOptions): Promise<TestOidcProvider> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const kid = 'test-signing-key'
  const privateJwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }
  const front = createServer()
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(front.address() as AddressInfo).port}`
  const clientId = 'tracewell'
  const clientSecret = 'tracewell-test-client-secret-0123456789'

  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: options.redirectUris, grant_types: ['authorization_code'], response_types: ['code'] }],
    jwks: { keys: [privateJwk] },
    findAccount: (_ctx: unknown, id: string) => {
      const account = options.accounts[id]
      return account && { accountId: id, claims: () => ({ sub: id, ...account }) }
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['oidc-provider-test-cookie-key-0123456789'] },
    pkce: { required: () => true },
    // Stated, so that the provider does not warn about its defaults on every sign-in.
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, IdToken: 600, Interaction: 600, Session: 3600 },
  })
  provider.on('server_error', (_ctx: unknown, error: Error) => process.stderr.write(`oidc-provider: ${error.stack ?? error.message}\n`))
  const back = provider.listen(0, '127.0.0.1') as Server
  await new Promise<void>((resolve) => back.once('listening', resolve))
  const backPort = (back.address() as AddressInfo).port

  const handle: TestOidcProvider = {
    issuer,
    clientId,
    clientSecret,
    tampering: 'none',
    async close() {
      front.closeAllConnections()
      back.closeAllConnections()
      await Promise.all([new Promise((resolve) => front.close(resolve)), new Promise((resolve) => back.close(resolve))])
    },
  }

  front.on('request', (incoming, outgoing) => {
    const forwarded = httpRequest({ host: '127.0.0.1', port: backPort, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
      const tampering = handle.tampering
      if (!incoming.url?.startsWith('/token') || tampering === 'none' || answer.statusCode !== 200) {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
        return
      }
      const chunks: Buffer[] = []
      answer.on('data', (chunk: Buffer) => chunks.push(chunk))
      answer.on('end', () => {
        const tokens = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id_token: string }
        tokens.id_token = altered(tokens.id_token, tampering, privateKey)
        const body = JSON.stringify(tokens)
        outgoing.writeHead(200, { ...answer.headers, 'content-length': Buffer.byteLength(body) })
        outgoing.end(body)
      })
    })
    forwarded.on('error', (error) => outgoing.destroy(error))
    incoming.pipe(forwarded)
  })
  return handle
}

function altered(idToken: string, tampering: Exclude<TokenTampering, 'none'>, key: KeyObject): string {
  const [header = '', payload = '', signature = ''] = idToken.split('.')
  if (tampering === 'tampered-signature') {
    // Flip one character in the middle (the last may only carry padding bits).
    const at = Math.floor(signature.length / 2)
    return `${header}.${payload}.${signature.slice(0, at)}${signature[at] === 'A' ? 'B' : 'A'}${signature.slice(at + 1)}`
  }
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>
  const now = Math.floor(Date.now() / 1000)
  if (tampering === 'wrong-audience') claims.aud = 'another-client'
  else Object.assign(claims, { iat: now - 7200, exp: now - 3600 })
  const signed = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
  return `${signed}.${createSign('RSA-SHA256').update(signed).sign(key).toString('base64url')}`
}

/**
 * The control plane's settings for this provider as the install's own (OIDC_*), Tracewell at
 * `publicUrl`: the provider runs on this machine, which the outbound policy refuses unless told.
 */
export function installOidcSettings(provider: TestOidcProvider, publicUrl: string): Record<string, string> {
  return { PUBLIC_URL: publicUrl, OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: provider.clientId, OIDC_CLIENT_SECRET: provider.clientSecret, OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' }
}
