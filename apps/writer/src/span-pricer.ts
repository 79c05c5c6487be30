import type { Db, SpanFields } from '@tracewell/db'
import type { ProjectSpanSource } from '@tracewell/write-path'
import { callerSpanCost, deriveLlmUsage, priceCall, type CustomPriceBook, type LlmFields, type UnpricedReason } from '@tracewell/llm-usage'
import type { Registry } from 'prom-client'
import type { Logger } from '@tracewell/logger'
import { ModelPriceCache } from './model-price-cache.ts'
import { spanBatchMetrics, type SpanBatchMetrics } from './span-batch.metrics.ts'

/**
 * Puts a cost on every LLM span as it is stored (docs/semantic-conventions.md): the caller's own
 * cost when it reported one (set when the span was decoded), else the project's own price for the
 * model, else the price table's. An LLM call no price is known for keeps a null cost and is
 * counted in tracewell_writer_unpriced_llm_spans_total, and its model logged once, so operators
 * notice and add a price.
 */
export class SpanPricer {
  readonly #prices: ModelPriceCache
  readonly #metrics: SpanBatchMetrics
  readonly #logger: Logger | undefined
  // (project, model) pairs already logged as unpriced; bounded, so a client inventing model names
  // cannot grow it (or the log) without limit.
  readonly #logged = new Set<string>()

  constructor(options: { db: Db; metrics: Registry; logger?: Logger; priceCacheTtlMs?: number; now?: () => number }) {
    this.#prices = new ModelPriceCache(options.db, options.priceCacheTtlMs, options.now)
    this.#metrics = spanBatchMetrics(options.metrics)
    this.#logger = options.logger
  }

  /**
   * The sources with their spans priced when they are asked for. The projects' prices are read
   * first (async), so pricing itself stays synchronous inside the COPY's encoding loop (storeSpans).
   */
  async priced(sources: readonly ProjectSpanSource[]): Promise<ProjectSpanSource[]> {
    const books = new Map<string, CustomPriceBook>()
    for (const projectId of new Set(sources.map((source) => source.projectId))) books.set(projectId, await this.#prices.bookFor(projectId))
    return sources.map((source) => ({
      projectId: source.projectId,
      spans: () => {
        const spans = source.spans()
        const book = books.get(source.projectId) as CustomPriceBook
        for (const span of spans) this.#price(source.projectId, span, book)
        return spans
      },
    }))
  }

  /** Sets the span's cost in place (the records are this job's own, and copying them is what the writer avoids). */
  #price(projectId: string, span: SpanFields, book: CustomPriceBook): void {
    if (span.llmResponseModel === undefined) rederive(span)
    // The caller's own cost, or a span priced when storeSpans asked for it before.
    if (span.costSource !== undefined && span.costSource !== null) return
    const { cost, unpriced } = priceCall(span as LlmFields, startOf(span), book)
    span.inputCostUsd = cost.inputCostUsd
    span.outputCostUsd = cost.outputCostUsd
    span.totalCostUsd = cost.totalCostUsd
    span.costSource = cost.costSource
    if (unpriced !== null) this.#unpriced(projectId, span, unpriced)
  }

  #unpriced(projectId: string, span: SpanFields, reason: UnpricedReason): void {
    this.#metrics.unpricedLlmSpans.inc({ reason })
    const model = span.llmResponseModel ?? span.llmModel ?? null
    const key = `${projectId}\u0000${model}`
    if (this.#logger === undefined || this.#logged.has(key) || this.#logged.size >= 1_000) return
    this.#logged.add(key)
    this.#logger.warn(
      { projectId, model, vendor: span.llmVendor, reason },
      unpricedMessages[reason],
    )
  }
}

const unpricedMessages: Record<UnpricedReason, string> = {
  no_model: 'LLM span with token counts but no model name: stored without a cost',
  no_input_tokens: 'LLM span with an output token count but no usable input count: stored without a cost rather than the output’s alone',
  unknown_model: 'no price known for this model: its spans are stored without a cost until the project gives it a price (POST /api/projects/:projectId/model-prices)',
}

/**
 * A span of an inline queue job written by the version before the LLM columns: its derived fields
 * are the old table's, so they are derived again here, with the caller's cost if it reported one.
 */
function rederive(span: SpanFields): void {
  // Such a job carries request bodies, decoded into objects: never the queued text of a 'records' body.
  const { fields, callerCost } = deriveLlmUsage(span.attributes as Record<string, Record<string, unknown>>, span.scopeName)
  Object.assign(span, fields, callerSpanCost(callerCost))
}

/** The span's start, to the millisecond (what the price tables' dates and hours need). */
function startOf(span: SpanFields): Date {
  const nanos = span.startTimeUnixNano
  return new Date(nanos.length > 6 ? Number(nanos.slice(0, -6)) : 0)
}
