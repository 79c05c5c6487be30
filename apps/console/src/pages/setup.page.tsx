import { useState, type FormEvent } from 'react'
import { Link, useParams } from 'react-router'
import { useMakeOwner, useSetupLink } from '../api/account-links.api.ts'
import { AccountCard, CardAlert, failureText, NewPasswordField } from '../components/account-card.tsx'
import { Loading } from '../components/status.tsx'

/** The setup link printed at the first start (docs/accounts.md#the-first-owner): the owner account, once. */
export default function SetupPage() {
  const token = useParams().token ?? ''
  const link = useSetupLink(token)
  const makeOwner = useMakeOwner(token)
  const [email, setEmail] = useState('')
  const [name, setName] = useState('')
  const [password, setPassword] = useState('')

  if (link.isPending) return <Loading label="Opening the setup link" />
  if (link.isError) {
    return (
      <AccountCard title="This setup link cannot be used">
        <CardAlert message={failureText(link.error)} />
        <Link to="/sign-in">Sign in</Link>
      </AccountCard>
    )
  }
  if (makeOwner.isSuccess) {
    return (
      <AccountCard title="Tracewell is yours">
        <p>
          {makeOwner.data.user.name}, you own {link.data.teamName}. Invite your team from the members page.
        </p>
        <Link className="button primary" to="/">
          Open the console
        </Link>
      </AccountCard>
    )
  }

  function submit(event: FormEvent) {
    event.preventDefault()
    makeOwner.mutate({ email: email.trim(), name: name.trim(), password })
  }
  return (
    <AccountCard title="Set up Tracewell" onSubmit={submit}>
      <p className="muted">
        Make the owner account of <strong>{link.data.teamName}</strong>. This link works once.
      </p>
      <label htmlFor="email">Email</label>
      <input id="email" name="email" type="email" autoComplete="email" required autoFocus value={email} onChange={(event) => setEmail(event.target.value)} />
      <label htmlFor="name">Your name</label>
      <input id="name" name="name" autoComplete="name" required value={name} onChange={(event) => setName(event.target.value)} />
      <NewPasswordField value={password} onChange={setPassword} />
      <CardAlert message={failureText(makeOwner.error)} />
      <button type="submit" className="button primary" disabled={makeOwner.isPending || email.trim() === '' || name.trim() === '' || password === ''}>
        {makeOwner.isPending ? 'Making the account…' : 'Make the owner account'}
      </button>
    </AccountCard>
  )
}
