import { openAIIfImported } from './openai-package.ts'

// Why a call to a model failed, and whether another attempt could do better: the queues retry the
// retryable ones with backoff and fail the others at once (a bad key, model or URL stays bad).

export class LlmCallError extends Error {
  override readonly name: string = 'LlmCallError'
  readonly retryable: boolean
  constructor(message: string, retryable: boolean) {
    super(message)
    this.retryable = retryable
  }
}

/** An error of the `openai` client as an LlmCallError, worded with who answered (`the judge`, `the model`). */
export function callErrorOf<E extends LlmCallError>(error: unknown, who: string, make: (message: string, retryable: boolean) => E): LlmCallError {
  if (error instanceof LlmCallError) return error
  const openai = openAIIfImported()
  if (openai !== undefined && error instanceof openai.APIConnectionError) return make(`${who} could not be reached: ${error.message}`, true)
  if (openai !== undefined && error instanceof openai.APIError) {
    const status = error.status ?? 0
    // Rate limits and the endpoint's own failures pass; a bad request, key, model or URL does not.
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500 || status === 0
    return make(`${who} answered ${status}: ${error.message.slice(0, 500)}`, retryable)
  }
  return make(error instanceof Error ? error.message : String(error), true)
}
