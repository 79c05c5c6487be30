// Why an outbound call failed before or while its reply was read. Messages are Tracewell's own
// words (never the target's reply), so they can be shown to whoever made the call.

export class OutboundError extends Error {
  override readonly name: string = 'OutboundError'
  /** Whether the same call could succeed later (a timeout may; a refused address will not). */
  readonly retryable: boolean
  constructor(message: string, retryable: boolean) {
    super(message)
    this.retryable = retryable
  }
}

/** The host resolves to an address the outbound policy refuses, or does not resolve at all. */
export class OutboundRefusedError extends OutboundError {
  override readonly name = 'OutboundRefusedError'
}

/** The reply is larger than OUTBOUND_MAX_RESPONSE_BYTES: it was cut there and its connection closed. */
export class ResponseTooLargeError extends OutboundError {
  override readonly name = 'ResponseTooLargeError'
  constructor(maxBytes: number) {
    super(`the reply is larger than OUTBOUND_MAX_RESPONSE_BYTES (${maxBytes} bytes) and was cut there`, false)
  }
}

/** Named so that no client mistakes it for the caller's own abort (the `openai` package ends a stream quietly on an AbortError). */
export class OutboundTimeoutError extends OutboundError {
  override readonly name = 'OutboundTimeoutError'
  constructor(timeoutMs: number) {
    super(`no complete reply within ${timeoutMs} ms`, true)
  }
}

/** An OutboundError anywhere in an error's cause chain (fetch and the `openai` package wrap them). */
export function outboundErrorIn(error: unknown): OutboundError | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    if (current instanceof OutboundError) return current
  }
  return undefined
}
