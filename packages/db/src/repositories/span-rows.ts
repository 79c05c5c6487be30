// The row form a span batch is stored through (see insertSerializedSpanRows): pure functions with
// no database import. Having ingest queue rows ready to store instead of request bodies was
// measured twice and rejected: inside BullMQ's job JSON the text was escaped again, and even as
// binary COPY rows in the payload (no escaping) encoding a span costs about as much as decoding
// it, which would add half again to ingest's CPU per span (docs/benchmarks.md).

import type { CostSource } from '../database.ts'
import { toStorableJson } from './storable-text.ts'

/** What a span says about where it came from and which model it used, stored in columns of their own. */
export interface SpanOriginFields {
  serviceName: string | null
  serviceVersion: string | null
  scopeName: string | null
  scopeVersion: string | null
  llmVendor: string | null
  llmModel: string | null
  llmRequestType: string | null
  inputTokens: number | null
  outputTokens: number | null
  totalTokens: number | null
  // Added with the LLM columns migration; optional because queue jobs of the version before may
  // still carry records without them (stored as null).
  llmResponseModel?: string | null
  cachedInputTokens?: number | null
  cacheWriteInputTokens?: number | null
  reasoningTokens?: number | null
  sessionId?: string | null
  userId?: string | null
  inputCostUsd?: number | null
  outputCostUsd?: number | null
  totalCostUsd?: number | null
  costSource?: CostSource | null
}

/**
 * One span to store: the fields of @tracewell/otlp's SpanRecord plus its project. Declared here
 * structurally so the db package does not depend on the parser.
 */
export interface SpanInsert extends SpanOriginFields {
  projectId: string
  traceId: string
  spanId: string
  parentSpanId: string | null
  name: string
  kind: number
  startTimeUnixNano: string
  endTimeUnixNano: string
  durationNs: string
  traceState: string | null
  statusCode: number
  statusMessage: string | null
  attributes: unknown
  resourceAttributes: unknown
  events: unknown
  links: unknown
}

/** A span without its project: what a ProjectSpanSource yields. */
export type SpanFields = Omit<SpanInsert, 'projectId'>

/**
 * The spans of one project, produced when `spans()` is called: storeSpanSources calls it once
 * (again only if the batch falls back to the statement path), so a caller can hand over request
 * bodies to be decoded, encoded and let go one at a time instead of all at once.
 */
export interface ProjectSpanSource {
  projectId: string
  spans(): readonly SpanFields[]
}

// Spans of one batch start and end within a few distinct seconds: formatting the date (half the
// cost of serialising a row) is done once per second seen, in a small cache that is reset when full.
const isoSeconds = new Map<string, string>()

/** Nanoseconds since the epoch (decimal string) → ISO 8601 with microseconds, without BigInt. */
export function nanosToIsoMicros(nanos: string): string {
  const padded = nanos.length >= 10 ? nanos : nanos.padStart(10, '0')
  const seconds = padded.slice(0, -9)
  let iso = isoSeconds.get(seconds)
  if (iso === undefined) {
    iso = new Date(Number(seconds) * 1000).toISOString().slice(0, 19)
    if (isoSeconds.size >= 256) isoSeconds.clear()
    isoSeconds.set(seconds, iso)
  }
  return `${iso}.${padded.slice(-9, -3)}Z`
}

/** Column name → Postgres type of the recordset a batch is unpacked through, in row key order. */
export const spanRowColumns = [
  ['project_id', 'text'], ['trace_id', 'text'], ['span_id', 'text'], ['parent_span_id', 'text'], ['name', 'text'],
  ['kind', 'smallint'], ['start_time', 'timestamptz'], ['end_time', 'timestamptz'], ['duration_ns', 'bigint'],
  ['trace_state', 'text'], ['status_code', 'smallint'], ['status_message', 'text'], ['service_name', 'text'],
  ['service_version', 'text'], ['scope_name', 'text'], ['scope_version', 'text'], ['llm_vendor', 'text'],
  ['llm_model', 'text'], ['llm_request_type', 'text'], ['input_tokens', 'bigint'], ['output_tokens', 'bigint'],
  ['total_tokens', 'bigint'], ['llm_response_model', 'text'], ['cached_input_tokens', 'bigint'], ['cache_write_input_tokens', 'bigint'],
  ['reasoning_tokens', 'bigint'], ['session_id', 'text'], ['user_id', 'text'], ['input_cost_usd', 'numeric'], ['output_cost_usd', 'numeric'],
  ['total_cost_usd', 'numeric'], ['cost_source', 'text'], ['attributes', 'jsonb'], ['resource_attributes', 'jsonb'], ['events', 'jsonb'], ['links', 'jsonb'],
] as const

export type SpanRow = Record<(typeof spanRowColumns)[number][0], unknown>

/** The row object of one span, keys in column order. */
function toSpanRow(projectId: string, span: Omit<SpanInsert, 'projectId'>): SpanRow {
  return {
    project_id: projectId,
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    name: span.name,
    kind: span.kind,
    start_time: nanosToIsoMicros(span.startTimeUnixNano),
    end_time: nanosToIsoMicros(span.endTimeUnixNano),
    duration_ns: span.durationNs,
    trace_state: span.traceState,
    status_code: span.statusCode,
    status_message: span.statusMessage,
    service_name: span.serviceName,
    service_version: span.serviceVersion,
    scope_name: span.scopeName,
    scope_version: span.scopeVersion,
    llm_vendor: span.llmVendor,
    llm_model: span.llmModel,
    llm_request_type: span.llmRequestType,
    input_tokens: span.inputTokens,
    output_tokens: span.outputTokens,
    total_tokens: span.totalTokens,
    llm_response_model: span.llmResponseModel ?? null,
    cached_input_tokens: span.cachedInputTokens ?? null,
    cache_write_input_tokens: span.cacheWriteInputTokens ?? null,
    reasoning_tokens: span.reasoningTokens ?? null,
    session_id: span.sessionId ?? null,
    user_id: span.userId ?? null,
    input_cost_usd: span.inputCostUsd ?? null,
    output_cost_usd: span.outputCostUsd ?? null,
    total_cost_usd: span.totalCostUsd ?? null,
    cost_source: span.costSource ?? null,
    attributes: span.attributes,
    resource_attributes: span.resourceAttributes,
    events: span.events,
    links: span.links,
  }
}

/**
 * The rows of a batch as JSON text WITHOUT the surrounding brackets: comma-joined row objects, so
 * chunks of several batches join with ',' and one pair of brackets makes the array Postgres reads.
 * One JSON.stringify over the whole array: measured faster than a hand-written builder (which
 * still has to stringify every value) and identical to the previous insert parameter by construction,
 * except that U+0000 and lone surrogates, which Postgres cannot store, become U+FFFD (storable-text.ts).
 */
export function serializeSpanRows(projectId: string, spans: readonly SpanFields[]): string {
  if (spans.length === 0) return ''
  return toStorableJson(JSON.stringify(spans.map((span) => toSpanRow(projectId, span)))).slice(1, -1)
}
