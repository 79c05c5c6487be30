import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js'
import protobuf from 'protobufjs'
import { grpcCodeFor, StatusMessage } from '../otlp/otlp-status.ts'

// How an ingest refusal (an HTTP error of ours: its status, message and Retry-After) is said over
// gRPC. OTLP/gRPC (opentelemetry-proto docs/specification.md, "Failures") tells exporters to retry
// UNAVAILABLE, and RESOURCE_EXHAUSTED only when the server sends a RetryInfo saying when.

interface RefusalLike {
  statusCode?: number
  message: string
  retryAfterSeconds?: number
}

/**
 * The gRPC code of an HTTP status: OTLP/HTTP's google.rpc.Status codes, but 413 (a message with
 * more spans than MAX_SPANS_PER_REQUEST) is INVALID_ARGUMENT, not RESOURCE_EXHAUSTED: the same
 * batch can never be accepted, and gRPC exporters retry RESOURCE_EXHAUSTED.
 */
export function grpcCodeOfHttpStatus(httpStatus: number): GrpcStatus {
  return httpStatus === 413 ? GrpcStatus.INVALID_ARGUMENT : (grpcCodeFor(httpStatus) as GrpcStatus)
}

/** google/rpc/error_details.proto: `RetryInfo { google.protobuf.Duration retry_delay = 1; }`. */
const Duration = new protobuf.Type('Duration').add(new protobuf.Field('seconds', 1, 'int64')).add(new protobuf.Field('nanos', 2, 'int32'))
const RetryInfo = new protobuf.Type('RetryInfo').add(Duration).add(new protobuf.Field('retryDelay', 1, 'Duration'))
new protobuf.Root().add(RetryInfo)
const RETRY_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.RetryInfo'

/** The `grpc-status-details-bin` a client reads the retry delay from: a google.rpc.Status with a RetryInfo. */
function statusDetailsWithRetry(code: number, message: string, retryAfterSeconds: number): Buffer {
  const retryInfo = RetryInfo.encode(RetryInfo.create({ retryDelay: { seconds: retryAfterSeconds, nanos: 0 } })).finish()
  const status = StatusMessage.encode(StatusMessage.create({ code, message, details: [{ type_url: RETRY_INFO_TYPE_URL, value: retryInfo }] })).finish()
  return Buffer.from(status)
}

/**
 * The gRPC error a refusal is answered with. A 5xx of no known kind keeps its details in the log,
 * as the HTTP error handler does.
 */
export function grpcErrorOf(refusal: RefusalLike): Partial<ServiceError> {
  const httpStatus = refusal.statusCode ?? 500
  const code = grpcCodeOfHttpStatus(httpStatus)
  const known = httpStatus < 500 || refusal.retryAfterSeconds !== undefined
  const details = known ? refusal.message : 'Internal error'
  const metadata = new Metadata()
  if (refusal.retryAfterSeconds !== undefined) metadata.set('grpc-status-details-bin', statusDetailsWithRetry(code, details, refusal.retryAfterSeconds))
  return { code, details, metadata }
}
