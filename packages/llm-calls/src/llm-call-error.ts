import { outboundErrorIn, OutboundRefusedError, OutboundTimeoutError, ResponseTooLargeError, type OutboundError } from '@tracewell/outbound'
import { openAIIfImported } from './openai-package.ts'

// Why a call to a model failed, and whether another attempt could do better: the queues retry the
// retryable ones with backoff and fail the others at once (a bad key, model or URL stays bad).
// The message is shown to whoever ran the call and stored with its trace, so it holds nothing of
// the target's reply beyond its status: whatever a base URL points at, its body does not come
// back through Tracewell. What the target said is kept in `detail`, for the server's log only.

export class LlmCallError extends Error {
  override readonly name: string = 'LlmCallError'
  readonly retryable: boolean
  /** The target's own words (an error body, a parse error), for the server's log; never shown to the caller. */
  detail: string | undefined
  constructor(message: string, retryable: boolean) {
    super(message)
    this.retryable = retryable
  }
}

/** A status answered, with what it means in Tracewell's words (`the model answered 401 (the API key was refused)`). */
export function answeredMessage(who: string, status: number): string {
  return `${who} answered ${status}${statusHint(status)}`
}

/** A call the outbound guard stopped: refused, timed out, or its reply past the bound. */
export function outboundFailureMessage(who: string, error: OutboundError): string {
  if (error instanceof OutboundRefusedError) return `${who} could not be called: ${error.message}`
  if (error instanceof ResponseTooLargeError) return `${who} answered too much: ${error.message}`
  if (error instanceof OutboundTimeoutError) return `${who} timed out: ${error.message}`
  return `${who} could not be reached: ${error.message}`
}

/** A call that reached nothing, by its connection error's code (`the model could not be reached (ECONNREFUSED)`). */
export function unreachedMessage(who: string, error: unknown): string {
  const code = connectionCode(error)
  return `${who} could not be reached${code === undefined ? '' : ` (${code})`}`
}

function statusHint(status: number): string {
  if (status >= 300 && status < 400) return ' (a redirect, which Tracewell does not follow: save the URL it points to as the base URL)'
  if (status === 401 || status === 403) return ' (the API key was refused)'
  if (status === 404) return ' (no such model, or the base URL is not the API’s)'
  if (status === 429) return ' (rate limited)'
  return ''
}

/** The code of a failed connection (ECONNREFUSED, ECONNRESET, …), from a fetch error's causes. */
function connectionCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') return code
  }
  return undefined
}

/** An error of the `openai` client as an LlmCallError, worded with who answered (`the judge`, `the model`). */
export function callErrorOf<E extends LlmCallError>(error: unknown, who: string, make: (message: string, retryable: boolean) => E): LlmCallError {
  if (error instanceof LlmCallError) return error
  const withDetail = (made: E, detail: string | undefined) => {
    made.detail = detail
    return made
  }
  const outbound = outboundErrorIn(error)
  if (outbound !== undefined) return make(outboundFailureMessage(who, outbound), outbound.retryable)
  const openai = openAIIfImported()
  if (openai !== undefined && error instanceof openai.APIConnectionTimeoutError) return make(`${who} timed out`, true)
  if (openai !== undefined && error instanceof openai.APIConnectionError) return withDetail(make(unreachedMessage(who, error), true), String(error.cause ?? error.message))
  if (openai !== undefined && error instanceof openai.APIError) {
    const status = error.status ?? 0
    // Rate limits and the endpoint's own failures pass; a bad request, key, model or URL does not.
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500 || status === 0
    return withDetail(make(answeredMessage(who, status), retryable), error.message)
  }
  const detail = error instanceof Error ? error.message : String(error)
  // The connection dropped while the reply was read (fetch's "terminated").
  const code = connectionCode(error)
  if (code !== undefined) return withDetail(make(`${who}'s reply was cut off (${code})`, true), detail)
  // A 2xx whose body is no chat completion (not JSON): what it held stays in the log.
  return withDetail(make(`${who}'s reply could not be read as an OpenAI-compatible answer`, true), detail)
}
