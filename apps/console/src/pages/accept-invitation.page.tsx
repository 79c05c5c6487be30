import { useState, type FormEvent } from 'react'
import { Link, useParams } from 'react-router'
import { useAcceptInvitation, useInvitationPreview } from '../api/account-links.api.ts'
import { AccountCard, CardAlert, failureText, NewPasswordField } from '../components/account-card.tsx'
import { Loading } from '../components/status.tsx'
import { formatTime } from '../lib/format.ts'

/**
 * An invitation's link (docs/accounts.md#invitations-and-members): a newcomer makes their account
 * here; someone whose email has one joins from their session.
 */
export default function AcceptInvitationPage() {
  const token = useParams().token ?? ''
  const preview = useInvitationPreview(token)
  const accept = useAcceptInvitation(token)
  const [name, setName] = useState('')
  const [password, setPassword] = useState('')

  if (preview.isPending) return <Loading label="Opening the invitation" />
  if (preview.isError) {
    return (
      <AccountCard title="This invitation cannot be used">
        <CardAlert message={failureText(preview.error)} />
      </AccountCard>
    )
  }
  const invitation = preview.data
  if (accept.isSuccess) {
    return (
      <AccountCard title={`Welcome to ${invitation.teamName}`}>
        <p>
          {accept.data.user.name}, you are a <strong>{invitation.role}</strong> of {invitation.teamName} now.
        </p>
        <Link className="button primary" to="/">
          Open the console
        </Link>
      </AccountCard>
    )
  }

  const intro = (
    <p className="muted">
      You are invited to <strong>{invitation.teamName}</strong> as <strong>{invitation.role}</strong>, as {invitation.email}. The link works once, until {formatTime(invitation.expiresAt)}.
    </p>
  )
  const failure = failureText(accept.error)

  if (invitation.accountExists) {
    // Their account exists: the session they are signed in with says who joins (the server
    // checks that it is the invited email, and says to sign in first otherwise).
    return (
      <AccountCard title={`Join ${invitation.teamName}`} onSubmit={(event) => (event.preventDefault(), accept.mutate({}))}>
        {intro}
        <p>{invitation.email} has an account: sign in with it, then join here.</p>
        <CardAlert message={failure} />
        <button type="submit" className="button primary" disabled={accept.isPending}>
          {accept.isPending ? 'Joining…' : `Join ${invitation.teamName}`}
        </button>
        <Link to="/sign-in" state={{ from: `/invitations/${token}` }}>
          Sign in
        </Link>
      </AccountCard>
    )
  }
  if (!invitation.signupAllowed) {
    return (
      <AccountCard title={`Join ${invitation.teamName}`}>
        {intro}
        <p>This server makes no new password accounts (SIGNUP=off): sign in through your organisation's single sign-on, then open this link again.</p>
      </AccountCard>
    )
  }

  function submit(event: FormEvent) {
    event.preventDefault()
    accept.mutate({ name: name.trim(), password })
  }
  return (
    <AccountCard title={`Join ${invitation.teamName}`} onSubmit={submit}>
      {intro}
      <label htmlFor="email">Email</label>
      <input id="email" type="email" value={invitation.email} readOnly />
      <label htmlFor="name">Your name</label>
      <input id="name" name="name" autoComplete="name" required autoFocus value={name} onChange={(event) => setName(event.target.value)} />
      <NewPasswordField value={password} onChange={setPassword} />
      <CardAlert message={failure} />
      <button type="submit" className="button primary" disabled={accept.isPending || name.trim() === '' || password === ''}>
        {accept.isPending ? 'Making your account…' : 'Make my account and join'}
      </button>
    </AccountCard>
  )
}
