import { BadRequestError } from '@tracewell/http'
import { unstorableMessage } from './storable-input.validator.ts'

// A body that is not JSON gets a 400 saying where it broke (V8's message gives the position, line
// and column), not Fastify's "Body is not valid JSON", which leaves the caller to guess.

/** The 400 for `text`, a body that failed to parse; `cause` is the parser's error (a prototype-poisoning refusal keeps its own words). */
export function jsonBodyError(text: string, cause?: unknown): Error {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return new BadRequestError(`body: not valid JSON: ${(error as Error).message}`)
  }
  // Parsed plainly, it is JSON: a parser with a reviver ran out of stack on its nesting.
  return new BadRequestError(unstorableMessage(value) ?? `body: ${cause instanceof Error ? cause.message : 'not valid JSON'}`)
}
