import { workerData } from 'node:worker_threads'
import { configureSpanLimits, SpanValidationError, type SpanLimits, type TraceBodyFormat } from '@tracewell/otlp'
import type { BodyFormat } from './media-type.ts'
import { decodeTraceBody } from './trace-body.decoder.ts'

// Runs in the decode pool's worker threads (trace-decode.pool.ts): a large body is parsed and
// validated here, off the thread that serves every other request. Only its verdict goes back:
// the queue carries the body's bytes, not its records, so nothing large crosses threads twice.

// The service's span limits (SPAN_*_LIMIT settings), which the pool hands every worker.
configureSpanLimits((workerData as { spanLimits: SpanLimits }).spanLimits)

export interface DecodeTask {
  body: Uint8Array
  format: BodyFormat
  maxProtobufFields: number
}

/** What a body decoded to, or why it was refused, as plain data (errors lose their class between threads). */
export type DecodeVerdict =
  | { kind: 'decoded'; format: TraceBodyFormat; accepted: number; rejected: number; problems: string[] }
  | { kind: 'invalid'; path: string; problem: string }
  | { kind: 'refused'; statusCode: 400 | 413; message: string }

export default function decodeInWorker({ body, format, maxProtobufFields }: DecodeTask): DecodeVerdict {
  try {
    const decoded = decodeTraceBody(Buffer.from(body.buffer, body.byteOffset, body.byteLength), format, maxProtobufFields)
    return { kind: 'decoded', format: decoded.format, accepted: decoded.spans.length, rejected: decoded.rejected, problems: decoded.problems }
  } catch (error) {
    if (error instanceof SpanValidationError) return { kind: 'invalid', path: error.path, problem: error.message.slice(error.path.length + 2) }
    // Everything else decodeTraceBody throws is a 4xx of this service (malformed JSON, too many
    // protobuf fields): its message says what and where.
    const { statusCode } = error as { statusCode?: unknown }
    if (statusCode === 400 || statusCode === 413) return { kind: 'refused', statusCode, message: (error as Error).message }
    throw error
  }
}
