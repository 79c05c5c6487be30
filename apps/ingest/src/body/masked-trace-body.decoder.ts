import { maskTraceBody, type MaskedBody, type Masker } from '@tracewell/masking'
import type { DecodedTraces, SpanRecord } from '@tracewell/otlp'
import type { BodyFormat } from './media-type.ts'
import { decodeTraceBody } from './trace-body.decoder.ts'

/** A body decoded and masked: what it counted, the spans to queue, and the masked bytes (null when nothing was masked). */
export interface MaskedTraces {
  decoded: DecodedTraces
  spans: SpanRecord[]
  masked: MaskedBody | null
}

/**
 * Decodes the body and masks its spans with `masker` (null: the project masks nothing), on the
 * request's thread or in a decode worker alike. Masked spans are decoded again from their masked
 * body, so that their user and session (derived from attributes) come from what was masked:
 * nothing unmasked leaves this process. Throws what decodeTraceBody throws.
 */
export function decodeMaskedTraceBody(body: Buffer, format: BodyFormat, maxProtobufFields: number, masker: Masker | null): MaskedTraces {
  const decoded = decodeTraceBody(body, format, maxProtobufFields)
  const masked = masker === null ? null : maskTraceBody(body, format, decoded.spans, masker)
  const spans = masked === null ? decoded.spans : decodeTraceBody(masked.body, masked.format, maxProtobufFields).spans
  return { decoded, spans, masked }
}
