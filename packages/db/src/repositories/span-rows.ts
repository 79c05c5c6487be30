// A stored span's shape: the fields a span is stored with, and the columns of `spans` they go to,
// in the order both storage paths (the COPY and the statement, @tracewell/write-path) write them.

import type { SpanRecord, spanOriginFields } from '@tracewell/span-schema'

/** What a span says about where it came from and which model it used, stored in columns of their own. */
export type SpanOriginFields = Pick<SpanRecord, keyof typeof spanOriginFields>

/** One span to store: the decoded record (@tracewell/span-schema) and its project. */
export type SpanInsert = SpanRecord & { projectId: string }

/** A span without its project: what a ProjectSpanSource yields. */
export type SpanFields = Omit<SpanInsert, 'projectId'>

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
  ['total_cost_usd', 'numeric'], ['cost_source', 'text'], ['tokens_estimated', 'boolean'], ['attributes', 'jsonb'], ['resource_attributes', 'jsonb'], ['events', 'jsonb'], ['links', 'jsonb'],
] as const

export type SpanRow = Record<(typeof spanRowColumns)[number][0], unknown>

