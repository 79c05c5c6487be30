import { sql } from 'kysely'
import type { Executor } from './executor.ts'
import { nanosToIsoMicros, type SpanInsert } from './span-rows.ts'
import { toStorableJson } from './storable-text.ts'
import { TextFilterWords } from './text-filter.ts'
import { lockSessionsOf } from './session-summaries.ts'

// The writer's side of trace_summaries: spans of a batch folded into one row per trace in memory,
// then added to the stored rows in one statement, in the transaction that stores the spans. Only
// spans that were inserted may be folded in (a duplicate would be counted twice).

type SummarySpan = Pick<
  SpanInsert,
  'traceId' | 'parentSpanId' | 'name' | 'startTimeUnixNano' | 'endTimeUnixNano' | 'statusCode' | 'serviceName' | 'llmModel' | 'llmVendor' | 'llmRequestType' | 'inputTokens' | 'outputTokens' | 'totalTokens' | 'totalCostUsd' | 'sessionId' | 'userId' | 'attributes'
>

interface TraceSummaryDelta {
  project_id: string
  trace_id: string
  name: string
  has_root: boolean
  service_name: string | null
  start: bigint
  end: bigint
  span_count: number
  error_count: number
  models: Set<string>
  vendors: Set<string>
  services: Set<string>
  input_tokens: number
  output_tokens: number
  total_tokens: number
  cost_usd: number | null
  session_id: string | null
  user_id: string | null
  words: TextFilterWords
}

const ERROR = 2

/**
 * The operation of a span that sums the calls made beneath it (the Vercel AI SDK's
 * ai.generateText, an agent's run): its tokens and cost are those of its child calls, so a trace's
 * totals leave it out, or every call would count twice. Its model and session still count.
 */
export const AGGREGATE_OPERATION = 'invoke_agent'

/** A batch's spans, one row per trace. */
export class TraceSummaryBatch {
  readonly #traces = new Map<string, TraceSummaryDelta>()
  /** The trace of the span added last, whose words addWordsOfLastSpan adds to. */
  #last: TraceSummaryDelta | undefined

  get size(): number {
    return this.#traces.size
  }

  /**
   * Folds a span into its trace's row; the words of its attributes too, unless the caller gives
   * them as JSON bytes (addWordsOfLastSpan), as the COPY path does.
   */
  add(projectId: string, span: SummarySpan, readWords = true): void {
    const key = `${projectId}\u0000${span.traceId}`
    const start = BigInt(span.startTimeUnixNano)
    const end = BigInt(span.endTimeUnixNano)
    const isRoot = span.parentSpanId === null
    let trace = this.#traces.get(key)
    if (trace === undefined) {
      trace = {
        project_id: projectId, trace_id: span.traceId, name: span.name, has_root: isRoot, service_name: span.serviceName, start, end,
        span_count: 0, error_count: 0, models: new Set(), vendors: new Set(), services: new Set(),
        input_tokens: 0, output_tokens: 0, total_tokens: 0, cost_usd: null, session_id: null, user_id: null, words: new TextFilterWords(),
      }
      this.#traces.set(key, trace)
    } else if ((isRoot && !trace.has_root) || (!trace.has_root && start < trace.start)) {
      // The root names the trace; until it arrives, the earliest span does.
      trace.name = span.name
      trace.service_name = span.serviceName ?? trace.service_name
      trace.has_root = isRoot
    }
    if (start < trace.start) trace.start = start
    if (end > trace.end) trace.end = end
    trace.span_count++
    if (span.statusCode === ERROR) trace.error_count++
    if (span.llmModel) trace.models.add(span.llmModel)
    if (span.llmVendor) trace.vendors.add(span.llmVendor)
    if (span.serviceName) trace.services.add(span.serviceName)
    if (span.llmRequestType !== AGGREGATE_OPERATION) {
      trace.input_tokens += span.inputTokens ?? 0
      trace.output_tokens += span.outputTokens ?? 0
      trace.total_tokens += span.totalTokens ?? (span.inputTokens ?? 0) + (span.outputTokens ?? 0)
      if (span.totalCostUsd !== null && span.totalCostUsd !== undefined) trace.cost_usd = (trace.cost_usd ?? 0) + span.totalCostUsd
    }
    trace.session_id ??= span.sessionId ?? null
    trace.user_id ??= span.userId ?? null
    if (readWords) trace.words.addAttributes(span.attributes)
    this.#last = trace
  }

  /** Adds the words of the last span's attributes, given as the UTF-8 bytes of their JSON text. */
  addWordsOfLastSpan(bytes: Uint8Array, start: number, end: number): void {
    this.#last?.words.addJson(bytes, start, end)
  }

  /** The rows as the upsert reads them, in key order so that concurrent writers lock rows in one order. */
  toJson(): string {
    const rows = [...this.#traces.values()]
      .sort((a, b) => (a.project_id === b.project_id ? (a.trace_id < b.trace_id ? -1 : 1) : a.project_id < b.project_id ? -1 : 1))
      .map((trace) => ({
        ...trace,
        start: undefined,
        end: undefined,
        start_time: nanosToIsoMicros(trace.start.toString()),
        end_time: nanosToIsoMicros(trace.end.toString()),
        models: [...trace.models].sort(),
        vendors: [...trace.vendors].sort(),
        services: [...trace.services].sort(),
        words: undefined,
        text_filter: trace.words.toHex(),
      }))
    // Text as the spans' own columns store it: jsonb refuses U+0000 and lone surrogates.
    return toStorableJson(JSON.stringify(rows))
  }
}

/**
 * The upsert of a TraceSummaryBatch for a pg client: its text and its one parameter. It answers a
 * row per session of its traces, which it locks for their recomputation (session-summaries.ts).
 */
export function traceSummaryUpsert(batch: TraceSummaryBatch): { text: string; values: [string] } {
  return { text: upsertText, values: [batch.toJson()] }
}

/** Adds a batch's rows to trace_summaries and locks their sessions; answers the number of sessions. */
export async function upsertTraceSummaries(db: Executor, batch: TraceSummaryBatch): Promise<number> {
  if (batch.size === 0) return 0
  const [head, tail] = upsertText.split('$1') as [string, string]
  return (await sql`${sql.raw(head)}${batch.toJson()}${sql.raw(tail)}`.execute(db)).rows.length
}

// Names follow the root span: a batch with the root replaces a name taken from an earlier span.
const upsertText = `
  with upserted as (
  insert into trace_summaries as s (project_id, trace_id, name, has_root, service_name, start_time, end_time, duration_us,
    span_count, error_count, models, vendors, services, input_tokens, output_tokens, total_tokens, cost_usd, session_id, user_id, text_filter)
  select project_id, trace_id, name, has_root, service_name, start_time, end_time,
    (extract(epoch from end_time - start_time) * 1000000)::bigint,
    span_count, error_count, models, vendors, services, input_tokens, output_tokens, total_tokens, cost_usd, session_id, user_id,
    ('x' || text_filter)::varbit
  from jsonb_to_recordset($1::jsonb) as b(project_id text, trace_id text, name text, has_root boolean, service_name text,
    start_time timestamptz, end_time timestamptz, span_count integer, error_count integer, models text[], vendors text[],
    services text[], input_tokens bigint, output_tokens bigint, total_tokens bigint, cost_usd numeric, session_id text, user_id text, text_filter text)
  on conflict (project_id, trace_id) do update set
    name = case when s.has_root then s.name when excluded.has_root or excluded.start_time < s.start_time then excluded.name else s.name end,
    service_name = case when s.has_root then s.service_name when excluded.has_root or excluded.start_time < s.start_time then coalesce(excluded.service_name, s.service_name) else s.service_name end,
    has_root = s.has_root or excluded.has_root,
    start_time = least(s.start_time, excluded.start_time),
    end_time = greatest(s.end_time, excluded.end_time),
    duration_us = (extract(epoch from greatest(s.end_time, excluded.end_time) - least(s.start_time, excluded.start_time)) * 1000000)::bigint,
    span_count = s.span_count + excluded.span_count,
    error_count = s.error_count + excluded.error_count,
    models = array(select distinct unnest(s.models || excluded.models) order by 1),
    vendors = array(select distinct unnest(s.vendors || excluded.vendors) order by 1),
    services = array(select distinct unnest(s.services || excluded.services) order by 1),
    input_tokens = s.input_tokens + excluded.input_tokens,
    output_tokens = s.output_tokens + excluded.output_tokens,
    total_tokens = s.total_tokens + excluded.total_tokens,
    cost_usd = case when s.cost_usd is null then excluded.cost_usd when excluded.cost_usd is null then s.cost_usd else s.cost_usd + excluded.cost_usd end,
    session_id = coalesce(s.session_id, excluded.session_id),
    user_id = coalesce(s.user_id, excluded.user_id),
    text_filter = tracewell_text_filter_union(s.text_filter, excluded.text_filter)
  returning project_id, session_id)
  ${lockSessionsOf('upserted')}`
