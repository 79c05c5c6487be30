import { useState, type FormEvent } from 'react'
import { Link, useSearchParams } from 'react-router'
import { ApiError } from '../api/client.ts'
import { useKeySignIn, useSignIn } from '../api/session.api.ts'
import { SsoButtons } from '../components/sso-buttons.tsx'
import { ThemeToggle } from '../components/theme.tsx'

function problemOf(error: Error | null): string | null {
  if (error === null) return null
  return error instanceof ApiError ? error.message : `The server cannot be reached: ${error.message}`
}

/**
 * Sign-in with an email and password (docs/accounts.md). Single sign-on buttons go in the
 * `sso-buttons` slot. An install that upgrades keeps signing in with a team key until an owner
 * account exists (then only with CONSOLE_KEY_SIGN_IN=true): that form is folded below; the key goes
 * to the server once and is kept nowhere in the browser.
 */
export function SignInPage() {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const signIn = useSignIn()
  // Where a refused single sign-on sends the browser back to, with the server's reason.
  const [search] = useSearchParams()
  const ssoError = search.get('sso_error')

  function submit(event: FormEvent) {
    event.preventDefault()
    // On success the app itself leaves this page for the one the visit started on.
    signIn.mutate({ email: email.trim(), password }, { onSuccess: () => setPassword('') })
  }

  const message = problemOf(signIn.error)

  return (
    <main className="sign-in">
      <div className="sign-in-theme">
        <ThemeToggle />
      </div>
      <div className="card sign-in-card">
        <form onSubmit={submit} aria-labelledby="sign-in-title">
          <h1 id="sign-in-title">Sign in to Tracewell</h1>
          <label htmlFor="email">Email</label>
          <input id="email" name="email" type="email" autoComplete="username" required autoFocus value={email} onChange={(event) => setEmail(event.target.value)} />
          <label htmlFor="password">Password</label>
          <input
            id="password"
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            aria-invalid={message !== null}
            aria-describedby={message ? 'sign-in-error' : undefined}
          />
          {message && (
            <p id="sign-in-error" className="error-message" role="alert">
              {message}
            </p>
          )}
          <button type="submit" className="button primary" disabled={signIn.isPending || email.trim() === '' || password === ''}>
            {signIn.isPending ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        <p className="small">
          <Link to="/forgot-password">Forgot your password?</Link>
        </p>
        {ssoError && (
          <p className="error-message" role="alert" aria-label="Single sign-on failed">
            Single sign-on failed: {ssoError}
          </p>
        )}
        <SsoButtons />
        <KeySignIn />
      </div>
    </main>
  )
}

function KeySignIn() {
  const [apiKey, setApiKey] = useState('')
  const signIn = useKeySignIn()
  const message = problemOf(signIn.error)

  function submit(event: FormEvent) {
    event.preventDefault()
    signIn.mutate(apiKey.trim(), { onSuccess: () => setApiKey('') })
  }

  return (
    <details className="key-sign-in">
      <summary>Sign in with a team key</summary>
      <form onSubmit={submit} aria-label="Sign in with a team key">
        <p className="muted">
          For installs from before accounts: a <strong>team API key</strong> (it starts with <code>tw_team_</code>; <code>npm run keys</code> shows the one made on the first start).
        </p>
        <label htmlFor="api-key">Team API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          value={apiKey}
          onChange={(event) => setApiKey(event.target.value)}
          aria-invalid={message !== null}
          aria-describedby={message ? 'key-sign-in-error' : undefined}
        />
        {message && (
          <p id="key-sign-in-error" className="error-message" role="alert">
            {message}
          </p>
        )}
        <button type="submit" className="button" disabled={signIn.isPending || apiKey.trim() === ''}>
          {signIn.isPending ? 'Signing in…' : 'Sign in with the key'}
        </button>
      </form>
    </details>
  )
}
