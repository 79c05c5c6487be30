import type { ErrorPath } from './error-path.ts'
import type { SpanRecord } from './span-record.ts'
import { SpanValidationError } from './validation-error.ts'

/** How many problems a partial success names; the others are only counted. */
const NAMED_PROBLEMS = 5

/**
 * The spans of one request body as they are decoded. A span that fails validation is rejected
 * alone: counted, its problem kept if it is among the first few, and decoding goes on with the
 * next span, so one bad span no longer costs the rest of the batch (OTLP's partial success).
 * Problems outside any span (the body's structure, a resource, a scope) still fail the body.
 * Ingest and the writer decode with this same code, so the writer stores exactly the spans that
 * ingest counted as accepted.
 */
export class SpanCollector {
  readonly spans: SpanRecord[] = []
  rejected = 0
  /** The messages of the first NAMED_PROBLEMS rejections, each starting with its path. */
  readonly problems: string[] = []
  #firstError: SpanValidationError | undefined

  /** Decodes one span; a SpanValidationError rejects that span and leaves `path` where it was. */
  collect(path: ErrorPath, decode: () => SpanRecord): void {
    const position = path.position
    try {
      this.spans.push(decode())
    } catch (error) {
      if (!(error instanceof SpanValidationError)) throw error
      path.backTo(position)
      this.rejected++
      this.#firstError ??= error
      if (this.problems.length < NAMED_PROBLEMS) this.problems.push(error.message)
    }
  }

  /**
   * The batch as the request's answer sees it: when every span was rejected there is nothing to
   * accept, and the body fails as a whole with its first problem (a 400, as before partial success).
   */
  result(): SpanCollector {
    if (this.spans.length === 0 && this.#firstError !== undefined) throw this.#firstError
    return this
  }
}
