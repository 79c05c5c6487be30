import { useState, type FormEvent } from 'react'
import { ApiError } from '../api/client.ts'
import { useSignIn } from '../api/session.api.ts'
import { SsoButtons } from '../components/sso-buttons.tsx'
import { ThemeToggle } from '../components/theme.tsx'

/**
 * Sign-in with a team key. The key goes to the server once, in this request; the server answers
 * with an HttpOnly cookie, and the key is kept nowhere in the browser (the field is cleared).
 */
export function SignInPage() {
  const [apiKey, setApiKey] = useState('')
  const signIn = useSignIn()

  function submit(event: FormEvent) {
    event.preventDefault()
    // On success the app itself leaves this page for the one the visit started on.
    signIn.mutate(apiKey.trim(), { onSuccess: () => setApiKey('') })
  }

  const error = signIn.error
  const message = error instanceof ApiError ? error.message : error ? `The server cannot be reached: ${error.message}` : null

  return (
    <main className="sign-in">
      <div className="sign-in-theme">
        <ThemeToggle />
      </div>
      <form className="card sign-in-card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to Tracewell</h1>
        <p className="muted">
          Use a <strong>team API key</strong> (it starts with <code>tw_team_</code>). <code>npm run keys</code> shows the one made on the first start.
        </p>
        <label htmlFor="api-key">Team API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          autoFocus
          value={apiKey}
          onChange={(event) => setApiKey(event.target.value)}
          aria-invalid={message !== null}
          aria-describedby={message ? 'sign-in-error' : undefined}
        />
        {message && (
          <p id="sign-in-error" className="error-message" role="alert">
            {message}
          </p>
        )}
        <button type="submit" className="button primary" disabled={signIn.isPending || apiKey.trim() === ''}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </button>
        <SsoButtons />
      </form>
    </main>
  )
}
