import { outboundErrorIn } from '@tracewell/outbound'

/** How one try went: what the delivery log keeps, and whether another try could help. */
export interface SendOutcome {
  ok: boolean
  /** The receiver's HTTP status (or the SMTP reply code); null when nothing answered. */
  status: number | null
  /** Tracewell's words for what went wrong; null when delivered. */
  error: string | null
  retryable: boolean
  durationMs: number
}

// A receiver that is down, overloaded or rate-limiting may take it later; one that refuses the
// request (4xx) or redirects (never followed: the saved URL is where notifications go) will not.
const retryableStatus = (status: number) => status >= 500 || status === 408 || status === 429

export function httpOutcome(status: number, durationMs: number): SendOutcome {
  if (status >= 200 && status < 300) return { ok: true, status, error: null, retryable: false, durationMs }
  const error =
    status >= 300 && status < 400 ? `the receiver answered ${status}, a redirect, which is not followed: save the URL it redirects to` : `the receiver answered ${status}`
  return { ok: false, status, error, retryable: retryableStatus(status), durationMs }
}

/** A call that got no answer: refused by the outbound policy, timed out, or not reached. */
export function unansweredOutcome(error: unknown, durationMs: number): SendOutcome {
  const outbound = outboundErrorIn(error)
  if (outbound !== undefined) return { ok: false, status: null, error: outbound.message, retryable: outbound.retryable, durationMs }
  let cause: unknown = error
  while (cause instanceof Error && cause.cause !== undefined) cause = cause.cause
  const code = (cause as { code?: unknown }).code
  const reason = typeof code === 'string' ? code : cause instanceof Error ? cause.message : 'unknown error'
  return { ok: false, status: null, error: `the receiver could not be reached (${reason})`, retryable: true, durationMs }
}
