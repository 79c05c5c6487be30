import { SpanValidationError, type SpanLimits, type TraceBodyFormat } from '@tracewell/otlp'
import { BadRequestError, PayloadTooLargeError } from '@tracewell/http'
import { workerModuleFile } from '@tracewell/service'
import { Piscina } from 'piscina'
import { decodersBusy } from '../errors.ts'
import { PARSE_DIRECTLY_UP_TO_BYTES } from './json-body.screen.ts'
import type { BodyFormat } from './media-type.ts'
import type { DecodeTask, DecodeVerdict } from './trace-decode.worker.ts'

/** What ingest needs to know of a body decoded off the main thread. */
export interface DecodedCount {
  format: TraceBodyFormat
  accepted: number
  rejected: number
  problems: string[]
  /** The spans to queue, masked and derived, as a 'records' body (encodeSpanRecords). */
  records: Uint8Array
}

/**
 * Worker threads that decode large bodies (DECODE_THREADS), so that parsing and validating one
 * client's 40 MB body never stalls the event loop that answers everyone else: JSON.parse and the
 * span conversion run in one piece, hundreds of milliseconds for the largest bodies the limits
 * allow. Small bodies, nearly every request, are decoded inline: a round trip to a worker costs
 * more than they do.
 *
 * Piscina (a worker pool kept by Node.js core contributors) rather than a hand-made one: it
 * replaces a crashed worker, bounds the waiting tasks and balances tasks across threads.
 */
export class TraceDecodePool {
  readonly #pool: Piscina<DecodeTask, DecodeVerdict>
  /** Bodies decoded in a worker so far (tracewell_ingest_worker_decodes_total). */
  decoded = 0
  /** Bodies refused because every worker was busy and the queue full. */
  refusedBusy = 0

  constructor(threads: number, limits: SpanLimits) {
    this.#pool = new Piscina({
      filename: workerModuleFile(new URL('../../dist/trace-decode.worker.mjs', import.meta.url), new URL('./trace-decode.worker.ts', import.meta.url)),
      // Each worker applies the service's span limits before its first body.
      workerData: { spanLimits: limits },
      // Started on the first large body, not at boot: an idle ingest keeps its memory (each worker
      // loads the decoder's modules), and most deployments rarely see such bodies.
      minThreads: 0,
      maxThreads: threads,
      // A few large bodies may wait per thread; beyond that a request is refused with 503 at
      // once instead of holding its memory in a queue that only grows under a flood.
      maxQueue: threads * 4,
      idleTimeout: 60_000,
    })
  }

  /** Whether a body of this size is worth a worker: larger than what the screen lets JSON.parse read directly. */
  static wants(body: Uint8Array): boolean {
    return body.byteLength > PARSE_DIRECTLY_UP_TO_BYTES
  }

  /**
   * Decodes in a worker, masks there with `maskingRules` (a project's rules as JSON) when given,
   * and answers the records to queue; throws the same 4xx errors decodeTraceBody would, and 503 when every worker is busy
   * and the queue full.
   */
  async decode(body: Uint8Array, format: BodyFormat, maxProtobufFields: number, maskingRules?: string): Promise<DecodedCount> {
    if (this.#pool.queueSize >= (this.#pool.options.maxQueue as number)) {
      this.refusedBusy++
      throw decodersBusy()
    }
    // The body is copied to the worker: the caller frees its own copy once the worker has answered.
    const verdict = await this.#pool.run({ body, format, maxProtobufFields, ...(maskingRules === undefined ? {} : { maskingRules }) })
    this.decoded++
    switch (verdict.kind) {
      case 'decoded': {
        const { kind: _kind, ...counted } = verdict
        return counted
      }
      case 'invalid':
        throw new SpanValidationError(verdict.path, verdict.problem)
      case 'refused':
        throw verdict.statusCode === 413 ? new PayloadTooLargeError(verdict.message) : new BadRequestError(verdict.message)
    }
  }

  /** Bodies waiting for a worker. */
  get waiting(): number {
    return this.#pool.queueSize
  }

  close(): Promise<void> {
    return this.#pool.close()
  }
}
