import { workerData } from 'node:worker_threads'
import { maskerOf, type Masker, type MaskingRule } from '@tracewell/masking'
import { configureSpanLimits, encodeSpanRecords, SpanValidationError, type SpanLimits, type TraceBodyFormat } from '@tracewell/otlp'
import type { BodyFormat } from './media-type.ts'
import { decodeMaskedTraceBody } from './masked-trace-body.decoder.ts'

// Runs in the decode pool's worker threads (trace-decode.pool.ts): a large body is parsed,
// validated, masked and its LLM fields derived here, off the thread that serves every other
// request. What goes back is its verdict and the records to queue, encoded once (encodeSpanRecords).

// The service's span limits (SPAN_*_LIMIT settings), which the pool hands every worker.
configureSpanLimits((workerData as { spanLimits: SpanLimits }).spanLimits)

export interface DecodeTask {
  body: Uint8Array
  format: BodyFormat
  maxProtobufFields: number
  /** The project's masking rules as JSON; absent when it has none. */
  maskingRules?: string
}

/** What a body decoded to, or why it was refused, as plain data (errors lose their class between threads). */
export type DecodeVerdict =
  | { kind: 'decoded'; format: TraceBodyFormat; accepted: number; rejected: number; problems: string[]; records: Uint8Array }
  | { kind: 'invalid'; path: string; problem: string }
  | { kind: 'refused'; statusCode: 400 | 413; message: string }

// A few projects' rules, compiled once per thread: the same rules come with every large body of a project.
const MASKERS_KEPT = 64
const maskers = new Map<string, Masker>()

function maskerFor(rulesJson: string): Masker {
  let masker = maskers.get(rulesJson)
  if (masker === undefined) {
    if (maskers.size >= MASKERS_KEPT) maskers.clear()
    masker = maskerOf(JSON.parse(rulesJson) as MaskingRule[])
    maskers.set(rulesJson, masker)
  }
  return masker
}

export default function decodeInWorker({ body, format, maxProtobufFields, maskingRules }: DecodeTask): DecodeVerdict {
  try {
    const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
    const { decoded, spans } = decodeMaskedTraceBody(bytes, format, maxProtobufFields, maskingRules === undefined ? null : maskerFor(maskingRules))
    return { kind: 'decoded', format: decoded.format, accepted: decoded.spans.length, rejected: decoded.rejected, problems: decoded.problems, records: encodeSpanRecords(spans) }
  } catch (error) {
    if (error instanceof SpanValidationError) return { kind: 'invalid', path: error.path, problem: error.message.slice(error.path.length + 2) }
    // Everything else decoding throws is a 4xx of this service (malformed JSON, too many
    // protobuf fields): its message says what and where.
    const { statusCode } = error as { statusCode?: unknown }
    if (statusCode === 400 || statusCode === 413) return { kind: 'refused', statusCode, message: (error as Error).message }
    throw error
  }
}
