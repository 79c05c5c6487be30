import formbody from '@fastify/formbody'
import type { CacheProvider } from '@node-saml/node-saml'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { openSecret } from '@tracewell/auth'
import { createSsoAttempt, findTeamById, findTeamSsoSettings, listTeamSsoProviders, ssoAttemptIsLive, takeSsoAttempt, type SsoAttempt } from '@tracewell/db'
import { BadRequestError, NotFoundError, ServiceUnavailableError, UnauthorizedError } from '@tracewell/http'
import { OutboundError, type Outbound } from '@tracewell/outbound'
import type { FastifyRequest } from 'fastify'
import { authorize } from '../accounts/authorize.ts'
import { backToSignInOnFailure } from '../accounts/sso/back-to-sign-in.ts'
import { accountOfIdentity, type AssertedIdentity } from '../accounts/sso/sso-accounts.ts'
import { bindAttemptToBrowser, takeBrowserHash } from '../accounts/sso/sso-attempt-cookie.ts'
import { errorChainMessage, OidcConfigurations, openIdClient } from '../accounts/sso/oidc-configurations.ts'
import type { SsoOptions } from '../accounts/sso/sso-options.ts'
import { notConfiguredMessage, resolveOidcProvider, teamProviderKey } from '../accounts/sso/sso-providers.ts'
import { samlAttemptTtlMs, samlIdentity, samlPaths, samlServiceProvider } from '../accounts/sso/saml-service-provider.ts'
import { errorResponses, IdSchema, SsoProvidersSchema } from '@tracewell/api-schemas'

// Signing in through an identity provider (docs/accounts.md#single-sign-on): OpenID Connect's
// authorization code flow with PKCE, state and nonce, and SAML 2.0's SP-initiated POST binding.
// A successful callback starts a session (app.userSessions.start) and sends the browser on to the
// console; a refused one answers 4xx naming the reason, and changes nothing (a browser is sent to
// the sign-in page with that reason instead).

export interface SsoRoutesOptions {
  sso: SsoOptions
  outbound: Outbound
  /** LLM_CONNECTION_ENCRYPTION_KEY: opens the teams' sealed client secrets. */
  encryptionKey: Buffer | undefined
}

/** How long a started OIDC sign-in may take at the provider (login, consent, a second factor). */
const oidcAttemptTtlMs = 10 * 60_000

const ReturnToSchema = Type.String({ pattern: '^/(?![/\\\\])[^\\s]*$', maxLength: 2000, description: 'the console path to land on once signed in (a local path, e.g. /traces); default /' })
const RedirectSchema = Type.Null({ description: 'a redirect (Location) to the identity provider, or once signed in to the console' })

const tags = ['single sign-on']

export const ssoRoutes: FastifyPluginAsyncTypebox<SsoRoutesOptions> = async (app, options) => {
  const { sso } = options
  const userSessions = app.userSessions
  if (userSessions === null) throw new Error('single sign-on needs people’s sessions (SESSION_SECRET)')
  const configurations = new OidcConfigurations(options.outbound)
  // SAML's answer is a form POSTed by the browser (application/x-www-form-urlencoded), here only.
  await app.register(formbody, { bodyLimit: 1024 * 1024 })

  const openTeamSecret = (sealed: string, context: string) => {
    if (options.encryptionKey === undefined) throw new ServiceUnavailableError('LLM_CONNECTION_ENCRYPTION_KEY is unset: the team’s OIDC client secret cannot be opened', 60)
    return openSecret(sealed, options.encryptionKey, context)
  }
  const requirePublicUrl = (): string => {
    if (sso.publicUrl === undefined) throw new NotFoundError(notConfiguredMessage('PUBLIC_URL is unset, so no provider could send people back'))
    return sso.publicUrl
  }
  const errorHandler = backToSignInOnFailure(() => app.errorHandler)

  app.get(
    '/api/auth/sso/providers',
    {
      config: { permission: 'anyone' },
      onRequest: authorize,
      schema: {
        operationId: 'listSsoProviders',
        summary: 'The identity providers the sign-in page offers',
        description: 'One button each: the install’s own OpenID Connect provider (OIDC_ISSUER) and every team’s own. Empty without PUBLIC_URL.',
        tags,
        security: [],
        response: { 200: SsoProvidersSchema, ...errorResponses() },
      },
    },
    async () => {
      if (sso.publicUrl === undefined) return { providers: [] }
      const own = sso.installOidc === null ? [] : [{ id: 'oidc', protocol: 'oidc' as const, teamId: null, displayName: sso.installOidc.displayName, loginUrl: '/api/auth/oidc/login' }]
      const teams = (await listTeamSsoProviders(app.db)).map((provider) => ({
        id: `${provider.protocol}:${provider.teamId}`,
        protocol: provider.protocol,
        teamId: provider.teamId,
        displayName: provider.displayName,
        loginUrl: provider.protocol === 'oidc' ? `/api/auth/oidc/login?team_id=${encodeURIComponent(provider.teamId)}` : samlPaths(provider.teamId).login,
      }))
      return { providers: [...own, ...teams] }
    },
  )

  app.get(
    '/api/auth/oidc/login',
    {
      config: { permission: 'anyone' },
      onRequest: authorize,
      schema: {
        operationId: 'startOidcSignIn',
        summary: 'Sign in through an OpenID Connect provider',
        description: 'Redirects to the provider (authorization code flow with PKCE, state and nonce). Without team_id, the install’s own provider (OIDC_ISSUER); with it, that team’s.',
        tags,
        security: [],
        querystring: Type.Object({ team_id: Type.Optional(IdSchema), return_to: Type.Optional(ReturnToSchema) }),
        response: { 302: RedirectSchema, ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      const publicUrl = requirePublicUrl()
      const teamId = request.query.team_id ?? null
      const provider = await resolveOidcProvider(app.db, sso, teamId, openTeamSecret)
      const configuration = await reachProvider(request, provider.settings.issuer, () => configurations.configurationOf(provider.settings))
      const oidc = await openIdClient()
      const codeVerifier = oidc.randomPKCECodeVerifier()
      const state = oidc.randomState()
      const nonce = oidc.randomNonce()
      const browserHash = bindAttemptToBrowser(request, reply, oidcAttemptTtlMs)
      await createSsoAttempt(app.db, { id: state, protocol: 'oidc', teamId, browserHash, codeVerifier, nonce, returnTo: request.query.return_to ?? '/' }, oidcAttemptTtlMs)
      const url = oidc.buildAuthorizationUrl(configuration, {
        redirect_uri: `${publicUrl}/api/auth/oidc/callback`,
        scope: provider.settings.scopes,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      })
      void reply.header('cache-control', 'no-store')
      return reply.redirect(url.href, 302)
    },
  )

  app.get(
    '/api/auth/oidc/callback',
    {
      config: { permission: 'anyone' },
      errorHandler,
      onRequest: authorize,
      schema: {
        operationId: 'finishOidcSignIn',
        summary: 'Where the OpenID Connect provider sends people back',
        description:
          'Register <PUBLIC_URL>/api/auth/oidc/callback at the provider. The code is exchanged with the PKCE verifier; the ID token’s signature (the provider’s published keys), issuer, audience, expiry and nonce are checked; the person is signed in (a new session cookie) and sent to the console. Each sign-in can finish once, in the browser that started it.',
        tags,
        security: [],
        // Providers add parameters of their own (session_state, …).
        querystring: Type.Object(
          { code: Type.Optional(Type.String({ maxLength: 4096 })), state: Type.Optional(Type.String({ maxLength: 512 })), iss: Type.Optional(Type.String({ maxLength: 2048 })), error: Type.Optional(Type.String({ maxLength: 200 })), error_description: Type.Optional(Type.String({ maxLength: 2000 })) },
          { additionalProperties: Type.String({ maxLength: 4096 }) },
        ),
        response: { 302: RedirectSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const publicUrl = requirePublicUrl()
      const { state } = request.query
      if (state === undefined || state === '') throw new BadRequestError('querystring/state: required (the sign-in this answers)')
      const attempt = await takeSsoAttempt(app.db, state, 'oidc')
      const browserHash = takeBrowserHash(request, reply)
      if (attempt === undefined) throw new BadRequestError(replayedMessage)
      if (browserHash !== attempt.browserHash) throw new BadRequestError('This sign-in was started in another browser (or its cookie was lost); start it again here')
      if (request.query.error !== undefined) throw new UnauthorizedError(`The identity provider refused the sign-in: ${request.query.error}${request.query.error_description ? ` (${request.query.error_description})` : ''}`)
      const provider = await resolveOidcProvider(app.db, sso, attempt.teamId, openTeamSecret)
      const configuration = await reachProvider(request, provider.settings.issuer, () => configurations.configurationOf(provider.settings))
      const oidc = await openIdClient()
      const callbackUrl = new URL(`${publicUrl}/api/auth/oidc/callback`)
      callbackUrl.search = new URL(request.url, 'http://callback').search
      const tokens = await reachProvider(request, provider.settings.issuer, () =>
        oidc.authorizationCodeGrant(configuration, callbackUrl, { pkceCodeVerifier: attempt.codeVerifier ?? '', expectedState: state, expectedNonce: attempt.nonce ?? '', idTokenExpected: true }),
      )
      const claims = tokens.claims()
      if (claims === undefined) throw new UnauthorizedError('The identity provider sent no ID token')
      let all: Record<string, unknown> = { ...claims }
      // Some providers keep the email out of the ID token; their userinfo has it.
      if (claims.email === undefined && tokens.access_token !== undefined) {
        const info = await reachProvider(request, provider.settings.issuer, () => oidc.fetchUserInfo(configuration, tokens.access_token, claims.sub))
        all = { ...info, ...claims }
      }
      const identity: AssertedIdentity = {
        subject: claims.sub,
        email: typeof all.email === 'string' ? all.email : undefined,
        emailVerified: all.email_verified === true || all.email_verified === 'true',
        name: typeof all.name === 'string' ? all.name : typeof all.preferred_username === 'string' ? all.preferred_username : undefined,
        claims: all,
      }
      const userId = await accountOfIdentity(app.db, provider.rules, identity)
      await userSessions.start(request, reply, userId)
      void reply.header('cache-control', 'no-store')
      return reply.redirect(attempt.returnTo, 302)
    },
  )

  const TeamParamsSchema = Type.Object({ teamId: IdSchema })

  app.get(
    '/api/auth/saml/:teamId/metadata',
    {
      config: { permission: 'anyone' },
      onRequest: authorize,
      schema: {
        operationId: 'getSamlMetadata',
        summary: 'The team’s SAML service-provider metadata',
        description: 'Give this URL (or the document) to the identity provider: it names the entity id (this URL) and the assertion consumer service, <PUBLIC_URL>/api/auth/saml/<teamId>/acs (HTTP-POST).',
        tags,
        security: [],
        params: TeamParamsSchema,
        response: { 200: Type.String({ description: 'SAML 2.0 metadata (XML)' }), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const publicUrl = requirePublicUrl()
      const team = await findTeamById(app.db, request.params.teamId)
      if (team === undefined) throw new NotFoundError('Team not found')
      const settings = await findTeamSsoSettings(app.db, team.id)
      // The SP's metadata does not depend on the IdP (it is what the IdP is configured from, so it
      // exists before the IdP does), but node-saml's constructor asks for an IdP certificate.
      const saml = await samlServiceProvider(publicUrl, team.id, settings?.saml ?? { entryPoint: publicUrl, idpIssuer: null, idpCertificate: 'not-yet-configured', displayName: '' }, noRequests)
      return reply.type('application/samlmetadata+xml').send(saml.generateServiceProviderMetadata(null, null))
    },
  )

  app.get(
    '/api/auth/saml/:teamId/login',
    {
      config: { permission: 'anyone' },
      onRequest: authorize,
      schema: {
        operationId: 'startSamlSignIn',
        summary: 'Sign in through the team’s SAML identity provider',
        description: 'Redirects to the IdP with an AuthnRequest (HTTP-Redirect binding); its answer comes back to the team’s /acs.',
        tags,
        security: [],
        params: TeamParamsSchema,
        querystring: Type.Object({ return_to: Type.Optional(ReturnToSchema) }),
        response: { 302: RedirectSchema, ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      const publicUrl = requirePublicUrl()
      const { teamId } = request.params
      const settings = await findTeamSsoSettings(app.db, teamId)
      if (settings?.saml === null || settings?.saml === undefined) throw new NotFoundError(notConfiguredMessage('this team has no SAML identity provider'))
      const returnTo = request.query.return_to ?? '/'
      const requests: CacheProvider = {
        ...noRequests,
        saveAsync: async (id, instant) => {
          await createSsoAttempt(app.db, { id, protocol: 'saml', teamId, browserHash: null, codeVerifier: null, nonce: null, returnTo }, samlAttemptTtlMs)
          return { value: instant, createdAt: Date.now() }
        },
      }
      const url = await (await samlServiceProvider(publicUrl, teamId, settings.saml, requests)).getAuthorizeUrlAsync('', undefined, {})
      void reply.header('cache-control', 'no-store')
      return reply.redirect(url, 302)
    },
  )

  app.post(
    '/api/auth/saml/:teamId/acs',
    {
      config: { permission: 'anyone' },
      errorHandler,
      onRequest: authorize,
      schema: {
        operationId: 'finishSamlSignIn',
        summary: 'The team’s SAML assertion consumer service',
        description:
          'Where the IdP POSTs its response (application/x-www-form-urlencoded, SAMLResponse and RelayState). The assertion must be signed with the team’s IdP certificate, addressed to the team’s entity id, within its validity window, and answer a sign-in started here (InResponseTo), once: unsolicited and replayed responses are refused.',
        tags,
        security: [],
        params: TeamParamsSchema,
        body: Type.Object({ SAMLResponse: Type.String({ minLength: 1, maxLength: 1024 * 1024 }), RelayState: Type.Optional(Type.String({ maxLength: 2000 })) }),
        response: { 302: RedirectSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const publicUrl = requirePublicUrl()
      const { teamId } = request.params
      const settings = await findTeamSsoSettings(app.db, teamId)
      if (settings?.saml === null || settings?.saml === undefined) throw new NotFoundError(notConfiguredMessage('this team has no SAML identity provider'))
      let taken: SsoAttempt | undefined
      const take = async (id: string) => (taken ??= await takeSsoAttempt(app.db, id, 'saml'))
      const requests: CacheProvider = {
        saveAsync: async () => null,
        getAsync: async (id) => ((await ssoAttemptIsLive(app.db, id, 'saml')) ? new Date().toISOString() : null),
        removeAsync: async (id) => (id === null ? null : ((await take(id))?.id ?? null)),
      }
      const saml = await samlServiceProvider(publicUrl, teamId, settings.saml, requests)
      let profile
      try {
        ;({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: request.body.SAMLResponse, ...(request.body.RelayState === undefined ? {} : { RelayState: request.body.RelayState }) }))
      } catch (error) {
        const message = (error as Error).message
        if (/InResponseTo/.test(message)) throw new BadRequestError(replayedMessage)
        throw new UnauthorizedError(`The SAML response was refused: ${message}`)
      }
      if (profile === null) throw new BadRequestError('The SAML response holds no assertion')
      // The request it answers must be taken here, once: two copies of one response racing each other sign in one.
      const attempt = taken ?? (typeof profile.inResponseTo === 'string' ? await take(profile.inResponseTo) : undefined)
      if (attempt === undefined || attempt.teamId !== teamId) throw new BadRequestError(replayedMessage)
      const rules = { provider: teamProviderKey('saml', teamId, settings.saml.idpIssuer ?? settings.saml.entryPoint), teamId, ownedByTeam: true, allowedDomains: settings.allowedDomains, defaultRole: settings.defaultRole, roleClaim: settings.roleClaim, roleMap: settings.roleMap }
      const userId = await accountOfIdentity(app.db, rules, samlIdentity(profile))
      await userSessions.start(request, reply, userId)
      void reply.header('cache-control', 'no-store')
      // 303: the browser follows a POST's answer with a GET.
      return reply.redirect(attempt.returnTo, 303)
    },
  )
}

export const replayedMessage = 'This sign-in is unknown, expired or already used (a replayed callback or assertion is refused); start it again'

/** A request store that keeps nothing, for metadata (which sends no request). */
const noRequests: CacheProvider = { saveAsync: async () => null, getAsync: async () => null, removeAsync: async () => null }

/**
 * A call to the provider: it cannot be reached → 503; it refused (an error answer, or an ID token
 * whose signature, issuer, audience, expiry or nonce is wrong) → 401 naming what.
 */
async function reachProvider<T>(request: FastifyRequest, issuer: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (unreachable(error)) {
      request.log.warn({ err: error, issuer }, 'identity provider unreachable')
      throw new ServiceUnavailableError(`The identity provider ${issuer} cannot be reached: ${errorChainMessage(error)}`, 30)
    }
    if (error instanceof (await openIdClient()).ResponseBodyError) throw new UnauthorizedError(`The identity provider refused the sign-in: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`)
    throw new UnauthorizedError(`The identity provider’s answer was refused: ${errorChainMessage(error)}`)
  }
}

function unreachable(error: unknown): boolean {
  for (let at: unknown = error; at instanceof Error; at = at.cause) {
    if (at instanceof OutboundError || (at instanceof TypeError && at.message === 'fetch failed')) return true
  }
  return false
}

