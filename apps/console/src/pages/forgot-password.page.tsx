import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { useAskPasswordReset } from '../api/account-links.api.ts'
import { AccountCard, CardAlert, failureText } from '../components/account-card.tsx'

/** Asks for a password reset link by mail (docs/accounts.md#password-reset). */
export default function ForgotPasswordPage() {
  const ask = useAskPasswordReset()
  const [email, setEmail] = useState('')

  function submit(event: FormEvent) {
    event.preventDefault()
    ask.mutate(email.trim())
  }
  return (
    <AccountCard title="Forgot your password?" onSubmit={submit}>
      {ask.isSuccess ? (
        <p role="status">{ask.data.message}</p>
      ) : (
        <>
          <p className="muted">We mail a link to choose a new one to the address of your account.</p>
          <label htmlFor="email">Email</label>
          <input id="email" name="email" type="email" autoComplete="email" required autoFocus value={email} onChange={(event) => setEmail(event.target.value)} />
          <CardAlert message={failureText(ask.error)} />
          <button type="submit" className="button primary" disabled={ask.isPending || email.trim() === ''}>
            {ask.isPending ? 'Sending…' : 'Mail me a link'}
          </button>
        </>
      )}
      <Link to="/sign-in">Back to sign-in</Link>
    </AccountCard>
  )
}
