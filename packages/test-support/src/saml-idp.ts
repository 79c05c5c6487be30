import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createRequire } from 'node:module'

// A SAML 2.0 identity provider (the `samlify` package acting as one) for the single sign-on
// tests: it reads the AuthnRequest of Tracewell's redirect and answers it as an IdP does, with an
// assertion signed by its own key (a fresh self-signed certificate from openssl), to POST to the
// service provider's ACS. A test may have it answer wrongly: for another audience, already
// expired, or with the signed assertion altered afterwards.

export interface SamlTestUser {
  email: string
  name?: string
  /** More attributes (groups, email_verified…), each a value or several. */
  attributes?: Record<string, string | string[]>
}

export interface SamlAnswerOptions {
  /** The Audience of the assertion; Tracewell's entity id unless a test says otherwise. */
  audience?: string
  /** Conditions that ended an hour ago. */
  expired?: boolean
  /** The signed assertion's email changed afterwards (the signature no longer matches). */
  tamperedEmail?: string
}

export interface TestSamlIdp {
  entityId: string
  ssoUrl: string
  /** The signing certificate, PEM. */
  certificate: string
  /** Answers the AuthnRequest in Tracewell's redirect to the IdP: the form fields its browser would POST. */
  answer(redirectTo: string, spMetadata: string, user: SamlTestUser, options?: SamlAnswerOptions): Promise<{ SAMLResponse: string; RelayState: string }>
}

const run = promisify(execFile)

// samlify's own type declarations pull in the DOM library (through @xmldom/xmldom), which changes
// Node's stream and fetch types in every program that imports this package: it is loaded without
// them, through the few calls used here.
interface SamlifyEntityMeta {
  getAssertionConsumerService(binding: string): string
  getEntityID(): string
}
interface SamlifyServiceProvider {
  entityMeta: SamlifyEntityMeta
}
interface SamlifyIdentityProvider {
  parseLoginRequest(sp: SamlifyServiceProvider, binding: 'redirect', request: { query: Record<string, string>; octetString: string }): Promise<{ extract: { request: { id: string } } }>
  createLoginResponse(sp: SamlifyServiceProvider, request: { extract: unknown }, binding: 'post', user: object, replace: (template: string) => { id: string; context: string }): Promise<{ context: string }>
}
interface Samlify {
  IdentityProvider(options: Record<string, unknown>): SamlifyIdentityProvider
  ServiceProvider(options: { metadata: string }): SamlifyServiceProvider
  Constants: { namespace: { binding: { redirect: string; post: string } }; StatusCode: { Success: string } }
  SamlLib: { replaceTagsByValue(template: string, values: Record<string, string>): string }
  setSchemaValidator(validator: { validate: (xml: string) => Promise<string> }): void
}
const samlify = createRequire(import.meta.url)('samlify') as Samlify
const authnMarker = 'AUTHN-STATEMENT-GOES-HERE'
const attributesMarker = 'ATTRIBUTE-STATEMENT-GOES-HERE'
const emailFormat = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'

// The IdP reads requests from the one SP under test; checking their XML against the SAML schema
// is the SP's concern, not this test IdP's.
samlify.setSchemaValidator({ validate: async () => 'not validated: a test IdP' })

export async function startSamlIdp(): Promise<TestSamlIdp> {
  const dir = await mkdtemp(join(tmpdir(), 'tracewell-saml-idp-'))
  try {
    await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '30', '-subj', '/CN=idp.acme.test', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')])
    const [privateKey, certificate] = await Promise.all([readFile(join(dir, 'key.pem'), 'utf8'), readFile(join(dir, 'cert.pem'), 'utf8')])
    return samlIdp(privateKey, certificate)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

function samlIdp(privateKey: string, certificate: string): TestSamlIdp {
  const entityId = 'https://idp.acme.test/metadata'
  const ssoUrl = 'https://idp.acme.test/sso'
  const idp = samlify.IdentityProvider({
    entityID: entityId,
    privateKey,
    signingCert: certificate,
    nameIDFormat: [emailFormat],
    singleSignOnService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: ssoUrl }],
  })
  return {
    entityId,
    ssoUrl,
    certificate,
    async answer(redirectTo, spMetadata, user, options = {}) {
      const sp = samlify.ServiceProvider({ metadata: spMetadata })
      const url = new URL(redirectTo)
      const request = await idp.parseLoginRequest(sp, 'redirect', { query: Object.fromEntries(url.searchParams), octetString: url.search.slice(1) })
      const requestId = request.extract.request.id
      const acs = sp.entityMeta.getAssertionConsumerService(samlify.Constants.namespace.binding.post)
      const now = Date.now()
      const notOnOrAfter = new Date(options.expired ? now - 3_600_000 : now + 300_000).toISOString()
      const id = `_${randomBytes(16).toString('hex')}`
      const values: Record<string, string> = {
        ID: id,
        AssertionID: `_${randomBytes(16).toString('hex')}`,
        Destination: acs,
        Audience: options.audience ?? sp.entityMeta.getEntityID(),
        SubjectRecipient: acs,
        Issuer: entityId,
        IssueInstant: new Date(options.expired ? now - 7_200_000 : now).toISOString(),
        StatusCode: samlify.Constants.StatusCode.Success,
        ConditionsNotBefore: new Date(options.expired ? now - 7_200_000 : now - 60_000).toISOString(),
        ConditionsNotOnOrAfter: notOnOrAfter,
        SubjectConfirmationDataNotOnOrAfter: notOnOrAfter,
        NameIDFormat: emailFormat,
        NameID: user.email,
        InResponseTo: requestId,
        AuthnStatement: authnMarker,
        AttributeStatement: attributesMarker,
      }
      // samlify escapes every value it puts in the template (as it should): the two statements, XML themselves, go in after.
      const statements = {
        authn: `<saml:AuthnStatement AuthnInstant="${new Date(now).toISOString()}" SessionIndex="_${randomBytes(8).toString('hex')}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
        attributes: attributeStatement({ email: user.email, ...(user.name === undefined ? {} : { displayName: user.name }), ...user.attributes }),
      }
      const response = await idp.createLoginResponse(sp, { extract: request.extract }, 'post', {}, (template: string) => ({ id, context: samlify.SamlLib.replaceTagsByValue(template, values).replace(authnMarker, statements.authn).replace(attributesMarker, statements.attributes) }))
      let SAMLResponse = response.context
      if (options.tamperedEmail !== undefined) {
        const xml = Buffer.from(SAMLResponse, 'base64').toString('utf8')
        SAMLResponse = Buffer.from(xml.replaceAll(escapeXml(user.email), escapeXml(options.tamperedEmail))).toString('base64')
      }
      return { SAMLResponse, RelayState: url.searchParams.get('RelayState') ?? '' }
    },
  }
}

function attributeStatement(attributes: Record<string, string | string[]>): string {
  const each = Object.entries(attributes).map(([name, value]) => {
    const values = (Array.isArray(value) ? value : [value]).map((item) => `<saml:AttributeValue xsi:type="xs:string">${escapeXml(item)}</saml:AttributeValue>`).join('')
    return `<saml:Attribute Name="${escapeXml(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${values}</saml:Attribute>`
  })
  return `<saml:AttributeStatement>${each.join('')}</saml:AttributeStatement>`
}

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`)
