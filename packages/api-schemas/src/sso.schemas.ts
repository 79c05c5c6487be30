import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema } from './common.schemas.ts'

// The shapes of single sign-on (docs/accounts.md#single-sign-on): the providers a sign-in page offers, and a team's settings.

export const SsoProviderSchema = Type.Object({
  id: Type.String({ description: 'oidc (the install’s own), oidc:<teamId> or saml:<teamId>' }),
  protocol: Type.Union([Type.Literal('oidc'), Type.Literal('saml')]),
  teamId: Type.Union([Type.String(), Type.Null()]),
  displayName: Type.String(),
  loginUrl: Type.String({ description: 'where the sign-in button goes' }),
})
export const SsoProvidersSchema = Type.Object({ providers: Type.Array(SsoProviderSchema) })

const TeamRoleSchema = Type.Union([Type.Literal('viewer'), Type.Literal('member'), Type.Literal('admin'), Type.Literal('owner')])
const DomainSchema = Type.String({ pattern: '^(\\*|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+)$', maxLength: 253, description: 'a lower-case email domain, e.g. acme.com, or * for any' })
const IssuerSchema = Type.String({ pattern: '^https?://[^?#\\s]+$', maxLength: 2000, description: 'the provider’s issuer URL, e.g. https://acme.okta.com' })

const oidcFields = {
  issuer: IssuerSchema,
  clientId: Type.String({ minLength: 1, maxLength: 512 }),
  displayName: Type.String({ minLength: 1, maxLength: 100, description: 'the label of its sign-in button' }),
}
const SamlSettingsSchema = Type.Object({
  entryPoint: Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2000, description: 'the IdP’s single sign-on URL (HTTP-Redirect binding)' }),
  idpIssuer: Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()], { description: 'the IdP’s entity id: its responses must name it (null: not checked)' }),
  idpCertificate: Type.String({ minLength: 1, maxLength: 20_000, description: 'the IdP’s signing certificate, PEM or its base64 body' }),
  displayName: Type.String({ minLength: 1, maxLength: 100 }),
})
const JoinRulesSchema = {
  allowedDomains: Type.Array(DomainSchema, { maxItems: 100, description: 'people of these email domains get an account at their first sign-in' }),
  defaultRole: TeamRoleSchema,
  roleClaim: Type.Union([Type.String({ pattern: '^[A-Za-z0-9_:/.-]+$', maxLength: 200 }), Type.Null()], { description: 'the claim or SAML attribute that says the role (e.g. groups), applied at every sign-in' }),
  roleMap: Type.Record(Type.String({ minLength: 1, maxLength: 200 }), TeamRoleSchema, { description: 'claim values → roles; empty: values that are role names stand for themselves' }),
  passwordSignIn: Type.Boolean({ description: 'false: members other than owners must sign in through single sign-on' }),
}

export const TeamSsoSettingsSchema = Type.Object({
  oidc: Type.Union([Type.Object({ ...oidcFields, clientSecretSet: Type.Boolean() }), Type.Null()]),
  saml: Type.Union([SamlSettingsSchema, Type.Null()]),
  ...JoinRulesSchema,
  serviceProvider: Type.Union([
    Type.Object({
      oidcRedirectUri: Type.String({ description: 'register it at the OIDC provider' }),
      samlMetadataUrl: Type.String({ description: 'the SP metadata, and the entity id' }),
      samlAcsUrl: Type.String(),
    }),
    Type.Null(),
  ], { description: 'what to register at the providers; null while PUBLIC_URL is unset' }),
  updatedAt: Type.Union([IsoDateSchema, Type.Null()]),
  mayChange: Type.Boolean({ description: 'whether the caller may change them (sso:write): the console shows no control they may not use' }),
})
export type TeamSsoSettingsBody = Static<typeof TeamSsoSettingsSchema>

export const PutTeamSsoSettingsSchema = Type.Object({
  oidc: Type.Union([
    Type.Object({
      ...oidcFields,
      clientSecret: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()], { description: 'omitted: keep the one stored; null: a public client (PKCE alone)' })),
    }),
    Type.Null(),
  ]),
  saml: Type.Union([SamlSettingsSchema, Type.Null()]),
  ...JoinRulesSchema,
})
export type PutTeamSsoSettings = Static<typeof PutTeamSsoSettingsSchema>
