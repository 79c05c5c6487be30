import protobuf from 'protobufjs'

// OTLP's partial success (opentelemetry-proto, ExportTracePartialSuccess): a request some of whose
// spans were refused is still a success, and says how many were refused and why. Full success
// leaves the field unset.

/** What a request's answer reports about the spans it refused; null when every span was valid. */
export interface PartialSuccess {
  rejectedSpans: number
  errorMessage: string
}

/** Long attribute keys end up in problem paths; the message stays readable in an exporter's log. */
const MAX_MESSAGE_LENGTH = 1_000

/** "2 of 10 spans rejected: <first problem>; <second problem>", bounded in length. */
export function partialSuccessOf(accepted: number, rejected: number, problems: readonly string[]): PartialSuccess | null {
  if (rejected === 0) return null
  const unnamed = rejected - problems.length
  let message = `${rejected} of ${accepted + rejected} spans rejected: ${problems.join('; ')}${unnamed > 0 ? `; and ${unnamed} more` : ''}`
  if (message.length > MAX_MESSAGE_LENGTH) message = `${message.slice(0, MAX_MESSAGE_LENGTH - 1)}…`
  return { rejectedSpans: rejected, errorMessage: message }
}

/**
 * opentelemetry/proto/collector/trace/v1/trace_service.proto:
 * `ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }` and
 * `ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2; }`.
 */
const PartialSuccessMessage = new protobuf.Type('ExportTracePartialSuccess')
  .add(new protobuf.Field('rejectedSpans', 1, 'int64'))
  .add(new protobuf.Field('errorMessage', 2, 'string'))
const ExportResponseMessage = new protobuf.Type('ExportTraceServiceResponse')
  .add(PartialSuccessMessage)
  .add(new protobuf.Field('partialSuccess', 1, 'ExportTracePartialSuccess'))
new protobuf.Root().add(ExportResponseMessage)

/** An ExportTraceServiceResponse, encoded; zero bytes on full success. */
export function encodeExportResponse(partial: PartialSuccess | null): Buffer {
  if (partial === null) return Buffer.alloc(0)
  const bytes = ExportResponseMessage.encode(ExportResponseMessage.create({ partialSuccess: partial })).finish()
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** The same message for a decoder's eyes (tests, and clients that want to read it back). */
export function decodeExportResponse(bytes: Uint8Array): { partialSuccess?: { rejectedSpans?: number; errorMessage?: string } } {
  return ExportResponseMessage.toObject(ExportResponseMessage.decode(bytes), { longs: Number }) as { partialSuccess?: { rejectedSpans?: number; errorMessage?: string } }
}
