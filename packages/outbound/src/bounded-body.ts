import { ResponseTooLargeError } from './errors.ts'

// A reply's body passed on as it is read, up to a bound: past it the stream errors with a
// ResponseTooLargeError and the source is cancelled, which closes its connection (a reply that goes
// on for hundreds of megabytes is neither kept in memory nor read to its end). Pulled one chunk at
// a time, so no more than a chunk waits here whatever the reader's pace.

export interface BoundedBodyOptions {
  maxBytes: number
  /** The error to pass on for a failed read (the whole-request timeout's, rather than fetch's abort). */
  errorOf: (error: unknown) => unknown
  /** Called once, when the body ends, fails or is cancelled. */
  done: () => void
}

export function boundedBody(source: ReadableStream<Uint8Array>, options: BoundedBodyOptions): ReadableStream<Uint8Array> {
  const reader = source.getReader()
  let read = 0
  let finished = false
  const finish = () => {
    if (finished) return
    finished = true
    options.done()
  }
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>
        try {
          chunk = await reader.read()
        } catch (error) {
          finish()
          controller.error(options.errorOf(error))
          return
        }
        if (chunk.done) {
          finish()
          controller.close()
          return
        }
        read += chunk.value.byteLength
        if (read > options.maxBytes) {
          const error = new ResponseTooLargeError(options.maxBytes)
          finish()
          controller.error(error)
          await reader.cancel(error).catch(() => undefined)
          return
        }
        controller.enqueue(chunk.value)
      },
      async cancel(reason) {
        finish()
        await reader.cancel(reason).catch(() => undefined)
      },
    },
    { highWaterMark: 0 },
  )
}
