import type { ReactNode } from 'react'

export function Loading({ label }: { label: string }) {
  return (
    <p className="status" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {label}…
    </p>
  )
}

/** "Could not load the traces: …"; `action` names what failed when it was not a read. */
export function ErrorMessage({ error, what, action = 'load' }: { error: unknown; what: string; action?: string }) {
  const message = error instanceof Error ? error.message : String(error)
  return (
    <p className="error-message" role="alert">
      Could not {action} {what}: {message}
    </p>
  )
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>
}
