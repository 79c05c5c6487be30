import { X509Certificate } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sealSecret } from '@tracewell/auth'
import { findTeamSsoSettings, putTeamSsoSettings, ssoClientSecretContext, teamRoleOf, type TeamSsoSettings } from '@tracewell/db'
import { BadRequestError, ServiceUnavailableError } from '@tracewell/http'
import { BaseUrlError, type Outbound } from '@tracewell/outbound'
import { roleAllows, teamKeyAllows } from '@tracewell/policy'
import type { FastifyRequest } from 'fastify'
import { authorize } from '../accounts/authorize.ts'
import { errorChainMessage, OidcConfigurations } from '../accounts/sso/oidc-configurations.ts'
import type { SsoOptions } from '../accounts/sso/sso-options.ts'
import { samlPaths } from '../accounts/sso/saml-service-provider.ts'
import { errorResponses, IdSchema, PutTeamSsoSettingsSchema, type TeamSsoSettingsBody, TeamSsoSettingsSchema } from '@tracewell/api-schemas'

// A team's own single sign-on (docs/accounts.md#single-sign-on): read by admins, changed by
// owners. The OIDC client secret is sealed before it is stored and never returned.

export interface SsoSettingsRoutesOptions {
  sso: SsoOptions
  outbound: Outbound
  encryptionKey: Buffer | undefined
}

const defaults = { allowedDomains: [] as string[], defaultRole: 'viewer' as const, roleClaim: null, roleMap: {}, passwordSignIn: true }

export const ssoSettingsRoutes: FastifyPluginAsyncTypebox<SsoSettingsRoutesOptions> = async (app, options) => {
  const configurations = new OidcConfigurations(options.outbound)
  const tags = ['single sign-on']
  const params = Type.Object({ teamId: IdSchema })

  function body(teamId: string, settings: TeamSsoSettings | undefined, mayChange: boolean): TeamSsoSettingsBody {
    const { publicUrl } = options.sso
    const paths = samlPaths(teamId)
    return {
      ...defaults,
      ...(settings && { allowedDomains: settings.allowedDomains, defaultRole: settings.defaultRole, roleClaim: settings.roleClaim, roleMap: settings.roleMap, passwordSignIn: settings.passwordSignIn }),
      oidc: settings?.oidc ? { issuer: settings.oidc.issuer, clientId: settings.oidc.clientId, displayName: settings.oidc.displayName, clientSecretSet: settings.oidc.clientSecretSealed !== null } : null,
      saml: settings?.saml ?? null,
      serviceProvider: publicUrl === undefined ? null : { oidcRedirectUri: `${publicUrl}/api/auth/oidc/callback`, samlMetadataUrl: `${publicUrl}${paths.metadata}`, samlAcsUrl: `${publicUrl}${paths.acs}` },
      updatedAt: settings?.updatedAt ?? null,
      mayChange,
    }
  }

  app.get(
    '/api/teams/:teamId/sso',
    {
      config: { permission: 'sso:read' },
      onRequest: authorize,
      schema: {
        operationId: 'getTeamSsoSettings',
        summary: 'The team’s single sign-on settings',
        description: 'Its OpenID Connect provider (never its client secret), its SAML identity provider, who joins through them, whether members may sign in with a password, and what to register at the providers.',
        tags,
        security: [{ apiKey: [] }],
        params,
        response: { 200: TeamSsoSettingsSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => body(request.params.teamId, await findTeamSsoSettings(app.db, request.params.teamId), await mayChange(request, request.params.teamId)),
  )

  app.put(
    '/api/teams/:teamId/sso',
    {
      config: { permission: 'sso:write' },
      onRequest: authorize,
      schema: {
        operationId: 'putTeamSsoSettings',
        summary: 'Set the team’s single sign-on',
        description:
          'Replaces the settings whole. The issuer is checked by reading its discovery document (through the outbound policy). Turning password sign-in off needs a provider; owners keep password sign-in whatever it says (the break-glass path, docs/accounts.md#single-sign-on).',
        tags,
        security: [{ apiKey: [] }],
        params,
        body: PutTeamSsoSettingsSchema,
        response: { 200: TeamSsoSettingsSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { teamId } = request.params
      const input = request.body
      const current = await findTeamSsoSettings(app.db, teamId)
      if (!input.passwordSignIn && input.oidc === null && input.saml === null && options.sso.installOidc === null) {
        throw new BadRequestError('passwordSignIn: cannot be false without an identity provider (set oidc or saml), or nobody but owners could sign in')
      }
      if (input.roleClaim === null && Object.keys(input.roleMap).length > 0) throw new BadRequestError('roleMap: needs roleClaim, the claim whose values it maps')
      let oidc = null
      if (input.oidc !== null) {
        const clientSecret = input.oidc.clientSecret === undefined ? undefined : input.oidc.clientSecret
        const sealed = clientSecret === undefined ? (current?.oidc?.clientSecretSealed ?? null) : clientSecret === null ? null : seal(clientSecret, teamId)
        await checkIssuer(input.oidc.issuer, input.oidc.clientId)
        oidc = { issuer: input.oidc.issuer, clientId: input.oidc.clientId, displayName: input.oidc.displayName, clientSecretSealed: sealed }
      }
      if (input.saml !== null) checkCertificate(input.saml.idpCertificate)
      const saved = await putTeamSsoSettings(app.db, teamId, {
        oidc,
        saml: input.saml,
        allowedDomains: [...new Set(input.allowedDomains)],
        defaultRole: input.defaultRole,
        roleClaim: input.roleClaim,
        roleMap: input.roleMap,
        passwordSignIn: input.passwordSignIn,
      })
      return body(teamId, saved, true)
    },
  )

  /** Whether the caller (admitted to read) may also change them, by the policy module's matrix. */
  async function mayChange(request: FastifyRequest, teamId: string): Promise<boolean> {
    const principal = request.principal
    if (principal?.kind !== 'user') return teamKeyAllows('sso:write')
    const role = await teamRoleOf(app.db, teamId, principal.user.id)
    return role !== undefined && roleAllows(role, 'sso:write')
  }

  function seal(secret: string, teamId: string): string {
    if (options.encryptionKey === undefined) throw new ServiceUnavailableError('LLM_CONNECTION_ENCRYPTION_KEY is unset: an OIDC client secret cannot be stored sealed (set it, or use a public client with clientSecret null)', 60)
    return sealSecret(secret, options.encryptionKey, ssoClientSecretContext(teamId))
  }

  /** The issuer's address must pass the outbound policy and serve a discovery document for this issuer. */
  async function checkIssuer(issuer: string, clientId: string): Promise<void> {
    try {
      await options.outbound.checkBaseUrl(issuer)
      await configurations.configurationOf({ issuer, clientId, clientSecret: null })
    } catch (error) {
      const reason = error instanceof BaseUrlError ? error.message : `its discovery document cannot be read: ${errorChainMessage(error)}`
      throw new BadRequestError(`oidc/issuer: ${reason}`)
    }
  }
}

function checkCertificate(raw: string): void {
  const pem = raw.includes('-----BEGIN') ? raw : `-----BEGIN CERTIFICATE-----\n${raw.replace(/\s+/g, '')}\n-----END CERTIFICATE-----`
  try {
    new X509Certificate(pem)
  } catch {
    throw new BadRequestError('saml/idpCertificate: not an X.509 certificate (PEM, or the base64 of its DER)')
  }
}
