import { useState, type FormEvent } from 'react'
import { useSession } from '../api/session.api.ts'
import { useSaveTeamSso, useTeamSso, type TeamRole, type TeamSsoChange, type TeamSsoSettings } from '../api/sso.api.ts'
import { CopyButton } from '../components/copy-button.tsx'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { formatTime } from '../lib/format.ts'

// The team's single sign-on (docs/accounts.md#single-sign-on): what to register at the identity
// providers, the providers themselves, who joins through them, and whether members may still sign
// in with a password. Owners change it; admins see it, and no control they may not use.

const roles: TeamRole[] = ['viewer', 'member', 'admin', 'owner']

export default function SsoPage() {
  const session = useSession()
  const teamId = session.data?.teamId ?? ''
  const settings = useTeamSso(teamId)
  return (
    <section className="page" aria-labelledby="sso-title">
      <div className="page-header">
        <h1 id="sso-title">Single sign-on</h1>
      </div>
      {settings.isPending && <Loading label="Loading the single sign-on settings" />}
      {settings.isError && <ErrorMessage error={settings.error} what="the single sign-on settings" />}
      {settings.data && <ServiceProvider settings={settings.data} />}
      {settings.data && (settings.data.mayChange ? <SsoForm teamId={teamId} settings={settings.data} key={teamId} /> : <SsoSummary settings={settings.data} />)}
    </section>
  )
}

function ServiceProvider({ settings }: { settings: TeamSsoSettings }) {
  const sp = settings.serviceProvider
  return (
    <section className="card" aria-labelledby="sp-title">
      <h2 id="sp-title">Register Tracewell at your provider</h2>
      {sp === null ? (
        <p className="muted">
          Set <code>PUBLIC_URL</code> (the address people open Tracewell at): providers send people back to it.
        </p>
      ) : (
        <dl className="facts">
          {(
            [
              ['OIDC redirect URI', sp.oidcRedirectUri],
              ['SAML metadata (entity id)', sp.samlMetadataUrl],
              ['SAML ACS (HTTP-POST)', sp.samlAcsUrl],
            ] as const
          ).map(([label, value]) => (
            <div key={label}>
              <dt>{label}</dt>
              <dd>
                <code>{value}</code> <CopyButton text={value} />
              </dd>
            </div>
          ))}
        </dl>
      )}
    </section>
  )
}

function SsoSummary({ settings }: { settings: TeamSsoSettings }) {
  return (
    <section className="card" aria-labelledby="sso-summary-title">
      <h2 id="sso-summary-title">Providers and rules</h2>
      <p className="muted">Only an owner of the team changes these.</p>
      <dl className="facts">
        <div>
          <dt>OpenID Connect</dt>
          <dd>{settings.oidc ? `${settings.oidc.displayName} (${settings.oidc.issuer})` : 'none'}</dd>
        </div>
        <div>
          <dt>SAML</dt>
          <dd>{settings.saml ? `${settings.saml.displayName} (${settings.saml.entryPoint})` : 'none'}</dd>
        </div>
        <div>
          <dt>New accounts from</dt>
          <dd>{settings.allowedDomains.length === 0 ? 'no domain: only existing members' : settings.allowedDomains.join(', ')}</dd>
        </div>
        <div>
          <dt>Default role</dt>
          <dd>{settings.defaultRole}</dd>
        </div>
        <div>
          <dt>Password sign-in</dt>
          <dd>{settings.passwordSignIn ? 'allowed' : 'off (owners keep it)'}</dd>
        </div>
        {settings.updatedAt && (
          <div>
            <dt>Changed</dt>
            <dd>{formatTime(settings.updatedAt)}</dd>
          </div>
        )}
      </dl>
    </section>
  )
}

function SsoForm({ teamId, settings }: { teamId: string; settings: TeamSsoSettings }) {
  const save = useSaveTeamSso(teamId)
  const [useOidc, setUseOidc] = useState(settings.oidc !== null)
  const [issuer, setIssuer] = useState(settings.oidc?.issuer ?? '')
  const [clientId, setClientId] = useState(settings.oidc?.clientId ?? '')
  const [clientSecret, setClientSecret] = useState('')
  const [oidcName, setOidcName] = useState(settings.oidc?.displayName ?? '')
  const [useSaml, setUseSaml] = useState(settings.saml !== null)
  const [entryPoint, setEntryPoint] = useState(settings.saml?.entryPoint ?? '')
  const [idpIssuer, setIdpIssuer] = useState(settings.saml?.idpIssuer ?? '')
  const [certificate, setCertificate] = useState(settings.saml?.idpCertificate ?? '')
  const [samlName, setSamlName] = useState(settings.saml?.displayName ?? '')
  const [domains, setDomains] = useState(settings.allowedDomains.join(', '))
  const [defaultRole, setDefaultRole] = useState<TeamRole>(settings.defaultRole)
  const [roleClaim, setRoleClaim] = useState(settings.roleClaim ?? '')
  const [roleMap, setRoleMap] = useState(Object.entries(settings.roleMap).map(([value, role]) => `${value}=${role}`).join('\n'))
  const [passwordSignIn, setPasswordSignIn] = useState(settings.passwordSignIn)

  function submit(event: FormEvent) {
    event.preventDefault()
    const change: TeamSsoChange = {
      oidc: useOidc ? { issuer: issuer.trim(), clientId: clientId.trim(), displayName: oidcName.trim(), ...(clientSecret === '' ? {} : { clientSecret }) } : null,
      saml: useSaml ? { entryPoint: entryPoint.trim(), idpIssuer: idpIssuer.trim() === '' ? null : idpIssuer.trim(), idpCertificate: certificate.trim(), displayName: samlName.trim() } : null,
      allowedDomains: domains.split(',').map((domain) => domain.trim().toLowerCase()).filter((domain) => domain !== ''),
      defaultRole,
      roleClaim: roleClaim.trim() === '' ? null : roleClaim.trim(),
      roleMap: Object.fromEntries(roleMap.split('\n').map((line) => line.trim()).filter((line) => line.includes('=')).map((line) => [line.slice(0, line.lastIndexOf('=')).trim(), line.slice(line.lastIndexOf('=') + 1).trim() as TeamRole])),
      passwordSignIn,
    }
    save.mutate(change, { onSuccess: () => setClientSecret('') })
  }

  return (
    <form className="card form narrow" onSubmit={submit} aria-labelledby="sso-form-title">
      <h2 id="sso-form-title">Providers and rules</h2>
      <label className="checkbox">
        <input type="checkbox" checked={useOidc} onChange={(event) => setUseOidc(event.target.checked)} />
        <span>An OpenID Connect provider (Okta, Entra ID, Google, Keycloak…)</span>
      </label>
      {useOidc && (
        <fieldset className="sso-provider">
          <label>
            <span>Issuer URL</span>
            <input required value={issuer} onChange={(event) => setIssuer(event.target.value)} placeholder="https://acme.okta.com" spellCheck={false} />
          </label>
          <label>
            <span>Client id</span>
            <input required value={clientId} onChange={(event) => setClientId(event.target.value)} spellCheck={false} />
          </label>
          <label>
            <span>Client secret</span>
            <input type="password" autoComplete="off" value={clientSecret} onChange={(event) => setClientSecret(event.target.value)} placeholder={settings.oidc?.clientSecretSet ? 'stored: leave empty to keep it' : 'none: a public client'} />
          </label>
          <label>
            <span>Button label</span>
            <input required value={oidcName} onChange={(event) => setOidcName(event.target.value)} placeholder="Okta" />
          </label>
        </fieldset>
      )}
      <label className="checkbox">
        <input type="checkbox" checked={useSaml} onChange={(event) => setUseSaml(event.target.checked)} />
        <span>A SAML 2.0 identity provider (ADFS, Okta, Entra ID…)</span>
      </label>
      {useSaml && (
        <fieldset className="sso-provider">
          <label>
            <span>Single sign-on URL</span>
            <input required value={entryPoint} onChange={(event) => setEntryPoint(event.target.value)} placeholder="https://adfs.acme.com/adfs/ls/" spellCheck={false} />
          </label>
          <label>
            <span>IdP entity id (optional)</span>
            <input value={idpIssuer} onChange={(event) => setIdpIssuer(event.target.value)} spellCheck={false} />
          </label>
          <label>
            <span>Signing certificate (PEM)</span>
            <textarea required rows={5} value={certificate} onChange={(event) => setCertificate(event.target.value)} spellCheck={false} />
          </label>
          <label>
            <span>Button label</span>
            <input required value={samlName} onChange={(event) => setSamlName(event.target.value)} placeholder="Acme ADFS" />
          </label>
        </fieldset>
      )}
      <label>
        <span>Email domains that get an account at first sign-in</span>
        <input value={domains} onChange={(event) => setDomains(event.target.value)} placeholder="acme.com, acme.co.uk (empty: only existing members)" spellCheck={false} />
      </label>
      <label>
        <span>Their role</span>
        <select value={defaultRole} onChange={(event) => setDefaultRole(event.target.value as TeamRole)}>
          {roles.map((role) => (
            <option key={role} value={role}>
              {role}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>Role claim or attribute (optional)</span>
        <input value={roleClaim} onChange={(event) => setRoleClaim(event.target.value)} placeholder="groups" spellCheck={false} />
      </label>
      <label>
        <span>Claim values to roles, one value=role a line</span>
        <textarea rows={3} value={roleMap} onChange={(event) => setRoleMap(event.target.value)} placeholder="tracewell-admins=admin" spellCheck={false} />
      </label>
      <label className="checkbox">
        <input type="checkbox" checked={passwordSignIn} onChange={(event) => setPasswordSignIn(event.target.checked)} />
        <span>Members may also sign in with a password (owners always may: the way back in when the provider fails)</span>
      </label>
      {save.isError && <ErrorMessage error={save.error} what="the single sign-on settings" action="save" />}
      {save.isSuccess && (
        <p role="status" className="success">
          Saved.
        </p>
      )}
      <button type="submit" className="button primary" disabled={save.isPending}>
        Save
      </button>
    </form>
  )
}
