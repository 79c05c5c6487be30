import protobuf from 'protobufjs'
import type { Type } from 'protobufjs'

/**
 * The part of OTLP's `ExportTraceServiceRequest` this service reads, written against the
 * opentelemetry-proto definitions (collector/trace/v1, trace/v1, resource/v1, common/v1): same
 * field numbers and wire types, fields we do not keep left out (protobuf skips unknown fields, and
 * not decoding them is faster). Deliberate differences, all wire-compatible:
 * - proto2 syntax with `optional` fields: every field read from the wire becomes an own property
 *   (proto3 implicit presence would drop an explicit `string_value: ""`), which is how the parser
 *   tells which AnyValue member is set, and strings are decoded by Node's native UTF-8 decoder
 *   (invalid sequences become U+FFFD, as the OTel Collector also tolerates them) instead of
 *   protobufjs' slower strict JS validation.
 * - AnyValue's members are not declared as a `oneof`: protobufjs' oneof bookkeeping (deleting the
 *   six other members on every value) cost a quarter of the decode time.
 * - `kind` and `status.code` are int32 rather than enums, so out-of-range values reach validation
 *   instead of being dropped.
 * - ResourceSpans field 1000 is `instrumentation_library_spans` from OTLP 0.15–0.19 (deprecated,
 *   same layout as ScopeSpans); exporters older than that used field 2, which reads as scope_spans.
 */
const OTLP_TRACE_PROTO = `
syntax = "proto2";
package tracewell.otlp;

message ExportTraceServiceRequest {
  repeated ResourceSpans resource_spans = 1;
}

message ResourceSpans {
  optional Resource resource = 1;
  repeated ScopeSpans scope_spans = 2;
  repeated ScopeSpans instrumentation_library_spans = 1000;
}

message Resource {
  repeated KeyValue attributes = 1;
}

message ScopeSpans {
  optional InstrumentationScope scope = 1;
  repeated Span spans = 2;
}

message InstrumentationScope {
  optional string name = 1;
  optional string version = 2;
}

message Span {
  optional bytes trace_id = 1;
  optional bytes span_id = 2;
  optional string trace_state = 3;
  optional bytes parent_span_id = 4;
  optional string name = 5;
  optional int32 kind = 6;
  optional fixed64 start_time_unix_nano = 7;
  optional fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  repeated Event events = 11;
  repeated Link links = 13;
  optional Status status = 15;

  message Event {
    optional fixed64 time_unix_nano = 1;
    optional string name = 2;
    repeated KeyValue attributes = 3;
  }

  message Link {
    optional bytes trace_id = 1;
    optional bytes span_id = 2;
    optional string trace_state = 3;
    repeated KeyValue attributes = 4;
  }
}

message Status {
  optional string message = 2;
  optional int32 code = 3;
}

message AnyValue {
  optional string string_value = 1;
  optional bool bool_value = 2;
  optional int64 int_value = 3;
  optional double double_value = 4;
  optional ArrayValue array_value = 5;
  optional KeyValueList kvlist_value = 6;
  optional bytes bytes_value = 7;
}

message ArrayValue {
  repeated AnyValue values = 1;
}

message KeyValueList {
  repeated KeyValue values = 1;
}

message KeyValue {
  optional string key = 1;
  optional AnyValue value = 2;
}
`

const root = protobuf.parse(OTLP_TRACE_PROTO, { keepCase: false }).root

/** Reflection type for the request; protobufjs generates its decoder once, on first use. */
export const ExportTraceServiceRequest: Type = root.lookupType('tracewell.otlp.ExportTraceServiceRequest')
