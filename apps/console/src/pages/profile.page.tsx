import { useState, type FormEvent } from 'react'
import { useChangePassword, useEndSession, useOwnSessions, useRename } from '../api/account.api.ts'
import { useSession } from '../api/session.api.ts'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { formatAgo, formatTime } from '../lib/format.ts'

/** A person's own account: their name, their password, where they are signed in. */
export default function ProfilePage() {
  const session = useSession()
  const user = session.data?.user
  if (!user) return <p className="page-error">Only a person signed in with their own account has a profile; this console is signed in with a team key.</p>
  return (
    <section className="page profile" aria-labelledby="profile-title">
      <div className="page-header">
        <h1 id="profile-title">Profile</h1>
        <span className="muted">{user.email}</span>
      </div>
      <NameForm name={user.name} />
      <PasswordForm />
      <OwnSessions />
    </section>
  )
}

function NameForm({ name }: { name: string }) {
  const [value, setValue] = useState(name)
  const rename = useRename()
  function submit(event: FormEvent) {
    event.preventDefault()
    rename.mutate(value.trim())
  }
  return (
    <form className="card form" onSubmit={submit} aria-labelledby="name-title">
      <h2 id="name-title">Name</h2>
      <label htmlFor="display-name">Display name (shown where you annotate, move labels and make keys)</label>
      <input id="display-name" required maxLength={200} value={value} onChange={(event) => setValue(event.target.value)} />
      {rename.isError && <ErrorMessage error={rename.error} what="the name" action="save" />}
      {rename.isSuccess && <p role="status">Saved.</p>}
      <button type="submit" className="button primary" disabled={rename.isPending || value.trim() === '' || value.trim() === name}>
        Save the name
      </button>
    </form>
  )
}

function PasswordForm() {
  const [currentPassword, setCurrent] = useState('')
  const [newPassword, setNew] = useState('')
  const change = useChangePassword()
  function submit(event: FormEvent) {
    event.preventDefault()
    change.mutate(
      { currentPassword, newPassword },
      {
        onSuccess: () => {
          setCurrent('')
          setNew('')
        },
      },
    )
  }
  return (
    <form className="card form" onSubmit={submit} aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <label htmlFor="current-password">Current password</label>
      <input id="current-password" type="password" autoComplete="current-password" required value={currentPassword} onChange={(event) => setCurrent(event.target.value)} />
      <label htmlFor="new-password">New password (at least 12 characters)</label>
      <input id="new-password" type="password" autoComplete="new-password" required minLength={12} value={newPassword} onChange={(event) => setNew(event.target.value)} />
      {change.isError && <ErrorMessage error={change.error} what="the password" action="change" />}
      {change.isSuccess && <p role="status">Password changed. You were signed out everywhere else.</p>}
      <button type="submit" className="button primary" disabled={change.isPending || currentPassword === '' || newPassword === ''}>
        Change the password
      </button>
    </form>
  )
}

function OwnSessions() {
  const sessions = useOwnSessions()
  const end = useEndSession()
  return (
    <section className="card" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Where you are signed in</h2>
      {sessions.isPending && <Loading label="Loading your sessions" />}
      {sessions.isError && <ErrorMessage error={sessions.error} what="your sessions" />}
      {sessions.data && (
        <table className="list-table" aria-label="Your sessions">
          <thead>
            <tr>
              <th scope="col">Browser</th>
              <th scope="col">Address</th>
              <th scope="col">Signed in</th>
              <th scope="col">Last active</th>
              <th scope="col">
                <span className="visually-hidden">End</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.data.map((session) => (
              <tr key={session.id}>
                <td>{session.userAgent ?? 'unknown'}</td>
                <td>{session.ip ?? '—'}</td>
                <td>{formatTime(session.createdAt)}</td>
                <td>{formatAgo(session.lastSeenAt)}</td>
                <td>
                  {session.current ? (
                    <span className="muted">this browser</span>
                  ) : (
                    <button type="button" className="button small danger" onClick={() => end.mutate(session.id)} disabled={end.isPending}>
                      Sign out there
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
