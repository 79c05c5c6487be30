import { useSsoProviders } from '../api/sso.api.ts'

/**
 * A button per identity provider (the install's own and every team's), for the sign-in page.
 * Each is a link: signing in through a provider is a full-page trip there and back, after which
 * the server's redirect lands on `returnTo` signed in. Renders nothing when there are none.
 */
export function SsoButtons({ returnTo = '/' }: { returnTo?: string }) {
  const providers = useSsoProviders()
  const list = providers.data ?? []
  if (list.length === 0) return null
  return (
    <nav className="sso-buttons" aria-label="Single sign-on">
      <p className="sso-divider muted">or</p>
      {list.map((provider) => (
        <a key={provider.id} className="button sso-button" href={withReturnTo(provider.loginUrl, returnTo)}>
          Sign in with {provider.displayName}
        </a>
      ))}
    </nav>
  )
}

function withReturnTo(loginUrl: string, returnTo: string): string {
  const url = new URL(loginUrl, window.location.origin)
  url.searchParams.set('return_to', returnTo)
  return url.pathname + url.search
}
