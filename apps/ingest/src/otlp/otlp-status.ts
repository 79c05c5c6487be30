import protobuf from 'protobufjs'

// OTLP/HTTP answers (opentelemetry-proto docs/specification.md, "OTLP/HTTP Response"): success
// is an ExportTraceServiceResponse and failure a google.rpc.Status, each in the encoding of the
// request, with "Content-Type" the same as the request's.

/** google.rpc.Code values for the HTTP statuses ingest answers with. */
export const GrpcCode = {
  INVALID_ARGUMENT: 3,
  RESOURCE_EXHAUSTED: 8,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const

/**
 * The specification leaves `Status.code` to the server and tells clients to act on the HTTP
 * status alone; these follow gRPC's own choices (an oversized message is RESOURCE_EXHAUSTED).
 */
export function grpcCodeFor(httpStatus: number): number {
  switch (httpStatus) {
    case 401:
      return GrpcCode.UNAUTHENTICATED
    case 413:
    case 429:
      return GrpcCode.RESOURCE_EXHAUSTED
    case 503:
      return GrpcCode.UNAVAILABLE
    default:
      return httpStatus >= 500 ? GrpcCode.INTERNAL : GrpcCode.INVALID_ARGUMENT
  }
}

/** google/rpc/status.proto: `int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3;` */
export const StatusMessage = new protobuf.Type('Status')
  .add(new protobuf.Field('code', 1, 'int32'))
  .add(new protobuf.Field('message', 2, 'string'))
  .add(new protobuf.Type('Any').add(new protobuf.Field('type_url', 1, 'string')).add(new protobuf.Field('value', 2, 'bytes')))
  .add(new protobuf.Field('details', 3, 'Any', 'repeated'))
new protobuf.Root().add(StatusMessage)

export function encodeStatus(status: { code: number; message: string }): Buffer {
  const bytes = StatusMessage.encode(StatusMessage.create(status)).finish()
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
