/**
 * A problem in a request body: in one span, which rejects that span alone (span-collector.ts), or
 * in the body's structure, which rejects the body (docs/api.md#partial-success).
 *
 * `message` starts with `path`, e.g.
 * `resourceSpans[0].scopeSpans[1].spans[7].spanId: expected 16 hex characters`, so it can be
 * returned to the client as is. `statusCode` lets Fastify's default error handling answer 400.
 */
export class SpanValidationError extends Error {
  readonly path: string
  readonly statusCode = 400

  constructor(path: string, problem: string) {
    super(`${path}: ${problem}`)
    this.name = 'SpanValidationError'
    this.path = path
  }
}
