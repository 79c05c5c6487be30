import type { ReactNode } from 'react'

export function Loading({ label }: { label: string }) {
  return (
    <p className="status" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {label}…
    </p>
  )
}

export function ErrorMessage({ error, what }: { error: unknown; what: string }) {
  const message = error instanceof Error ? error.message : String(error)
  return (
    <p className="error-message" role="alert">
      Could not load {what}: {message}
    </p>
  )
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>
}
