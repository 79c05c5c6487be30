import { nanosToIsoMicros, toStorableJson, type SpanInsert } from '@tracewell/db'
import { TextFilterWords } from '@tracewell/text-filter'
import { addDecimals, DecimalSum } from './exact-decimal.ts'
import { JsonArrayBytes } from './json-array-bytes.ts'
import { traceDeltaValues, type TraceDelta } from './trace-delta-layout.ts'
import { spanLabels } from './trace-labels.ts'

// What a batch of stored spans adds to their traces' summaries: one delta per trace of each source,
// folded in memory as the spans are encoded, written beside the spans in the same transaction (summary
// deltas), and later merged with the deltas of other batches and added to trace_summaries by the
// summariser. Only spans that were inserted may be added (a duplicate would be counted twice).

type SummarySpan = Pick<
  SpanInsert,
  'traceId' | 'parentSpanId' | 'name' | 'attributes' | 'startTimeUnixNano' | 'endTimeUnixNano' | 'statusCode' | 'statusMessage' | 'serviceName' | 'llmModel' | 'llmResponseModel' | 'llmVendor' | 'llmRequestType' | 'inputTokens' | 'outputTokens' | 'totalTokens' | 'totalCostUsd' | 'tokensEstimated' | 'sessionId' | 'userId'
>

export type { TraceDelta } from './trace-delta-layout.ts'

const ERROR = 2

/**
 * The operation of a span that sums the calls made beneath it (the Vercel AI SDK's
 * ai.generateText, an agent's run): its tokens and cost are those of its child calls, so a trace's
 * totals leave it out, or every call would count twice. Its model and session still count.
 */
export const AGGREGATE_OPERATION = 'invoke_agent'

/**
 * Merges `delta` into `into`, the fold of earlier spans of the same trace. Order-independent for
 * everything but the two ids a trace keeps from the first span that names them: the root names
 * the trace; until it arrives, the earliest span does.
 */
export function mergeTraceDelta(into: TraceDelta, delta: TraceDelta): void {
  takeNameIfFirst(into, delta.has_root, delta.start_time, delta.name, delta.service_name)
  if (delta.start_time < into.start_time) into.start_time = delta.start_time
  if (delta.end_time > into.end_time) into.end_time = delta.end_time
  into.span_count += delta.span_count
  into.error_count += delta.error_count
  into.models = unionSorted(into.models, delta.models)
  into.response_models = unionSorted(into.response_models, delta.response_models)
  into.vendors = unionSorted(into.vendors, delta.vendors)
  into.services = unionSorted(into.services, delta.services)
  into.prompts = unionSorted(into.prompts ?? [], delta.prompts ?? [])
  into.tags = unionSorted(into.tags ?? [], delta.tags ?? [])
  into.input_tokens = addCounts(into.input_tokens, delta.input_tokens)
  into.output_tokens = addCounts(into.output_tokens, delta.output_tokens)
  into.total_tokens = addCounts(into.total_tokens, delta.total_tokens)
  into.cost_usd = delta.cost_usd === null ? into.cost_usd : addDecimals(into.cost_usd, delta.cost_usd)
  into.tokens_estimated = into.tokens_estimated === true || delta.tokens_estimated === true
  into.session_id ??= delta.session_id
  into.user_id ??= delta.user_id
}

/** The sum of two token counts of which either may be unknown (null): unknown only when both are. */
export function addCounts(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined) return b ?? null
  if (b === null || b === undefined) return a
  return a + b
}

/**
 * A span's total tokens: as it reported them, else its input and output counts added (either
 * alone when the other is unknown), else unknown.
 */
export function spanTotalTokens(span: Pick<SpanInsert, 'inputTokens' | 'outputTokens' | 'totalTokens'>): number | null {
  return span.totalTokens ?? addCounts(span.inputTokens, span.outputTokens)
}

/** The root names the trace; until it arrives, the earliest span does (its service too, when it has one). */
function takeNameIfFirst(into: TraceDelta, isRoot: boolean, start: string, name: string, serviceName: string | null): void {
  if ((isRoot && !into.has_root) || (!into.has_root && start < into.start_time)) {
    into.name = name
    into.service_name = serviceName ?? into.service_name
    into.has_root = isRoot
  }
}

function unionSorted(a: readonly string[], b: readonly string[]): string[] {
  if (b.length === 0) return a as string[]
  if (a.length === 0) return b as string[]
  return [...new Set([...a, ...b])].sort()
}

/**
 * A trace being folded from spans: its delta with the words still open. Its sets (models,
 * vendors, services) are arrays kept free of repeats, sorted when the delta is closed: a trace
 * names a few of each, and four Sets a trace were a tenth of a one-span trace's delta.
 */
interface OpenTrace {
  delta: TraceDelta
  words: TextFilterWords
  /** The spans' costs, written into the delta when it is closed. */
  cost: DecimalSum
}

/**
 * The small set kept as an array with `value` added. A first value makes an array of one: a push
 * to an empty array gives it room for 17, and a one-span trace's four such sets, held with its
 * delta until the batch commits, were ~40 % of its heap (docs/benchmarks.md).
 */
function withValue(set: string[], value: string): string[] {
  if (set.length === 0) return [value]
  if (!set.includes(value)) set.push(value)
  return set
}

const sorted = (set: string[]): string[] => (set.length > 1 ? set.sort() : set)

/**
 * A batch's spans, one delta per trace of each source (a request: a trace's spans come together),
 * closed when the source has been encoded (closeOpen): written as JSON text outside the heap
 * (JsonArrayBytes), its objects let go while still young. A trace whose spans came in two sources
 * of a batch has two deltas in its row, which the fold merges as it merges those of two rows.
 */
export class TraceDeltas {
  /** The deltas of the source being added, by project and trace. */
  readonly #open = new Map<string, OpenTrace>()
  readonly #closed = new JsonArrayBytes()
  /** The trace of the span added last, whose words addWordsOfLastSpan adds to. */
  #last: OpenTrace | undefined

  /** Deltas in all, closed or open: what the row's trace_count says. */
  get size(): number {
    return this.#closed.count + this.#open.size
  }

  /**
   * Folds a span into its trace's delta, the words of its status message (an exception's) too; the
   * words of its attributes and events come through addWordsOfLastSpan.
   */
  add(projectId: string, span: SummarySpan): void {
    const key = `${projectId}\u0000${span.traceId}`
    const start = nanosToIsoMicros(span.startTimeUnixNano)
    const end = nanosToIsoMicros(span.endTimeUnixNano)
    const isRoot = span.parentSpanId === null
    let trace = this.#open.get(key)
    if (trace === undefined) {
      trace = {
        delta: {
          project_id: projectId, trace_id: span.traceId, name: span.name, has_root: isRoot, service_name: span.serviceName, start_time: start, end_time: end,
          span_count: 0, error_count: 0, models: [], response_models: [], vendors: [], services: [], prompts: [], tags: [],
          input_tokens: null, output_tokens: null, total_tokens: null, cost_usd: null, tokens_estimated: false, session_id: null, user_id: null, words: null,
        },
        words: new TextFilterWords(),
        cost: new DecimalSum(),
      }
      this.#open.set(key, trace)
    }
    const delta = trace.delta
    takeNameIfFirst(delta, isRoot, start, span.name, span.serviceName)
    if (start < delta.start_time) delta.start_time = start
    if (end > delta.end_time) delta.end_time = end
    delta.span_count++
    if (span.statusCode === ERROR) delta.error_count++
    if (span.llmModel) delta.models = withValue(delta.models, span.llmModel)
    if (span.llmResponseModel && span.llmResponseModel !== span.llmModel) delta.response_models = withValue(delta.response_models, span.llmResponseModel)
    if (span.llmVendor) delta.vendors = withValue(delta.vendors, span.llmVendor)
    if (span.serviceName) delta.services = withValue(delta.services, span.serviceName)
    const { prompt, tags } = spanLabels(span.attributes)
    if (prompt !== null) delta.prompts = withValue(delta.prompts as string[], prompt)
    for (const tag of tags) delta.tags = withValue(delta.tags as string[], tag)
    if (span.llmRequestType !== AGGREGATE_OPERATION) {
      delta.input_tokens = addCounts(delta.input_tokens, span.inputTokens)
      delta.output_tokens = addCounts(delta.output_tokens, span.outputTokens)
      delta.total_tokens = addCounts(delta.total_tokens, spanTotalTokens(span))
      if (span.totalCostUsd !== null && span.totalCostUsd !== undefined) trace.cost.add(span.totalCostUsd)
    }
    if (span.tokensEstimated === true) delta.tokens_estimated = true
    delta.session_id ??= span.sessionId ?? null
    delta.user_id ??= span.userId ?? null
    if (span.statusMessage) trace.words.addJson(Buffer.from(JSON.stringify(span.statusMessage)))
    this.#last = trace
  }

  /** Adds the words of the last span's attributes, given as the UTF-8 bytes of their JSON text. */
  addWordsOfLastSpan(bytes: Uint8Array, start: number, end: number): void {
    this.#last?.words.addJson(bytes, start, end)
  }

  /** Closes the open deltas, their sets sorted and their words added: the next span starts a trace's delta anew. */
  closeOpen(): void {
    for (const { delta, words, cost } of this.#open.values()) {
      delta.cost_usd = cost.text
      delta.models = sorted(delta.models)
      delta.response_models = sorted(delta.response_models)
      delta.vendors = sorted(delta.vendors)
      delta.services = sorted(delta.services)
      delta.prompts = sorted(delta.prompts as string[])
      delta.tags = sorted(delta.tags as string[])
      delta.words = words.toBase64()
      // Text as the spans' own columns store it: Postgres refuses U+0000 and lone surrogates.
      this.#closed.push(toStorableJson(JSON.stringify(traceDeltaValues(delta))))
    }
    this.#open.clear()
    this.#last = undefined
  }

  /** Every delta as the row's JSON text (UTF-8), the open ones closed first. */
  text(): Buffer {
    this.closeOpen()
    return this.#closed.bytes()
  }
}
