import { useState, type FormEvent } from 'react'
import { Link, useParams } from 'react-router'
import { usePasswordResetLink, useResetPassword } from '../api/account-links.api.ts'
import { AccountCard, CardAlert, failureText, NewPasswordField } from '../components/account-card.tsx'
import { Loading } from '../components/status.tsx'

/** A password reset link from the mail (docs/accounts.md#password-reset). */
export default function ResetPasswordPage() {
  const token = useParams().token ?? ''
  const link = usePasswordResetLink(token)
  const reset = useResetPassword(token)
  const [password, setPassword] = useState('')

  if (link.isPending) return <Loading label="Opening the link" />
  if (link.isError) {
    return (
      <AccountCard title="This link cannot be used">
        <CardAlert message={failureText(link.error)} />
        <Link to="/forgot-password">Ask for a new link</Link>
      </AccountCard>
    )
  }
  if (reset.isSuccess) {
    return (
      <AccountCard title="Your password is set">
        <p>Every session of {link.data.email} was signed out. Sign in with the new password.</p>
        <Link className="button primary" to="/sign-in">
          Sign in
        </Link>
      </AccountCard>
    )
  }

  function submit(event: FormEvent) {
    event.preventDefault()
    reset.mutate(password)
  }
  return (
    <AccountCard title="Choose a new password" onSubmit={submit}>
      <p className="muted">For {link.data.email}. Setting it signs you out everywhere.</p>
      <NewPasswordField value={password} onChange={setPassword} label="New password" />
      <CardAlert message={failureText(reset.error)} />
      <button type="submit" className="button primary" disabled={reset.isPending || password === ''}>
        {reset.isPending ? 'Setting…' : 'Set the password'}
      </button>
    </AccountCard>
  )
}
