import type { FormEvent, ReactNode } from 'react'
import { ThemeToggle } from './theme.tsx'

/**
 * The frame of the pages people reach signed out, from a link or the sign-in page: one card in
 * the middle, a form when `onSubmit` is given.
 */
export function AccountCard({ title, onSubmit, children }: { title: string; onSubmit?: (event: FormEvent) => void; children: ReactNode }) {
  const body = (
    <>
      <h1 id="account-card-title">{title}</h1>
      {children}
    </>
  )
  return (
    <main className="sign-in">
      <div className="sign-in-theme">
        <ThemeToggle />
      </div>
      {onSubmit ? (
        <form className="card sign-in-card" onSubmit={onSubmit} aria-labelledby="account-card-title">
          {body}
        </form>
      ) : (
        <section className="card sign-in-card" aria-labelledby="account-card-title">
          {body}
        </section>
      )}
    </main>
  )
}

/** What a failed request said, for the card's alert; null while there is nothing to say. */
export function failureText(error: Error | null): string | null {
  if (error === null) return null
  return error.name === 'ApiError' ? error.message : `The server cannot be reached: ${error.message}`
}

export function CardAlert({ message }: { message: string | null }) {
  if (message === null) return null
  return (
    <p className="error-message" role="alert">
      {message}
    </p>
  )
}

/** A new password: the server holds the rule and names it when one falls short. */
export function NewPasswordField({ value, onChange, label = 'Password' }: { value: string; onChange: (value: string) => void; label?: string }) {
  return (
    <>
      <label htmlFor="new-password">{label}</label>
      <input id="new-password" name="new-password" type="password" autoComplete="new-password" required value={value} onChange={(event) => onChange(event.target.value)} />
    </>
  )
}
