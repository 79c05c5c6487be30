// How a trace's delta is written in a summary_deltas row: an array of its values in a fixed order,
// not an object naming its 23 fields, which were most of its text (~700 bytes a one-span trace's
// delta named, ~400 positional), stringified by the writer, stored and read back by the fold.
// Rows written before hold named objects, which are read as they are: a row's entries say
// themselves which form they are in (an array or an object), so no version is needed.

/** One trace's delta as stored in a summary delta and read by the fold (snake_case, as the table's columns). */
export interface TraceDelta {
  project_id: string
  trace_id: string
  name: string
  has_root: boolean
  service_name: string | null
  /** ISO 8601 with microseconds: compared as text, which orders such times correctly. */
  start_time: string
  end_time: string
  span_count: number
  error_count: number
  models: string[]
  response_models: string[]
  vendors: string[]
  services: string[]
  /**
   * Sums of the counts the spans reported; null while no span reported one (unknown, not 0). A sum
   * over some spans that reported and some that did not is the reported spans' sum, as for cost.
   * Deltas written before counts could be unknown hold 0 there, which adds the same.
   */
  input_tokens: number | null
  output_tokens: number | null
  total_tokens: number | null
  /** Exact decimal text, or null when no span of the delta had a cost. */
  cost_usd: string | null
  /** A span of the delta has estimated token counts. Absent in deltas written before the field (false). */
  tokens_estimated?: boolean
  session_id: string | null
  user_id: string | null
  /**
   * The prompts (promptset:version) and tags its spans named (trace-labels.ts), sorted. Absent in
   * deltas of writers before 2026-12-06 (none).
   */
  prompts?: string[]
  tags?: string[]
  /**
   * Its words' hashes (TextFilterWords.toBase64), or null without words: the fold adds them to the
   * trace's word filter and to its block's. Absent in deltas of writers before 2026-11-27, which
   * carried the trace's filter (`text_filter`) instead: the fold then reads the trace's words from
   * its spans.
   */
  words?: string | null
  text_filter?: string | null
}

/**
 * A delta's values in its row: this fixes each field's place, and the fold of a later version
 * reads it, so append only (a new field takes the next index, and reads as absent in older rows).
 */
export function traceDeltaValues(delta: TraceDelta): unknown[] {
  return [
    delta.project_id, delta.trace_id, delta.name, delta.has_root, delta.service_name, delta.start_time, delta.end_time,
    delta.span_count, delta.error_count, delta.models, delta.response_models, delta.vendors, delta.services,
    delta.input_tokens, delta.output_tokens, delta.total_tokens, delta.cost_usd, delta.tokens_estimated,
    delta.session_id, delta.user_id, delta.prompts, delta.tags, delta.words,
  ]
}

/** A delta as traceDeltaValues wrote it, or a named one as writers before it did. */
export function traceDeltaOf(entry: unknown): TraceDelta {
  if (!Array.isArray(entry)) return entry as TraceDelta
  const values = entry as unknown[]
  // One literal, so that every delta read has one shape (as the records' decoder builds spans).
  return {
    project_id: values[0] as string,
    trace_id: values[1] as string,
    name: values[2] as string,
    has_root: values[3] as boolean,
    service_name: values[4] as string | null,
    start_time: values[5] as string,
    end_time: values[6] as string,
    span_count: values[7] as number,
    error_count: values[8] as number,
    models: values[9] as string[],
    response_models: values[10] as string[],
    vendors: values[11] as string[],
    services: values[12] as string[],
    input_tokens: values[13] as number | null,
    output_tokens: values[14] as number | null,
    total_tokens: values[15] as number | null,
    cost_usd: values[16] as string | null,
    tokens_estimated: values[17] as boolean,
    session_id: values[18] as string | null,
    user_id: values[19] as string | null,
    prompts: values[20] as string[],
    tags: values[21] as string[],
    words: values[22] as string | null,
  }
}
