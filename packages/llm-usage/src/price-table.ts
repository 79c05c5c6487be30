import { createRequire } from 'node:module'
import type { calcPrice as CalcPrice, ModelInfo, ModelPrice, Provider, TieredPrices } from '@pydantic/genai-prices'
import { costAtRates, roundedCost, type Cost, type PricedTokens } from './token-usage.ts'

// Prices from @pydantic/genai-prices, chosen over tokenlens (both compared on npm, 2026-11):
// - it matches model names as providers and clients spell them (dated snapshots such as
//   gpt-4o-mini-2024-07-18, Bedrock ids, "provider/model" routes), where tokenlens knows only
//   catalogue ids, resolved "gpt-4o-mini" to Azure, and did not know the dated OpenAI names;
// - it keeps each price's history (start_date) and time-of-day prices (DeepSeek off-peak), so a
//   span is priced at the prices of the moment it ran, and long-context tiers (Claude, Gemini);
// - cache reads, cache writes and reasoning are priced as the provider prices them, with the
//   OTel meaning of the counts (cache tokens part of the input, reasoning part of the output);
// - it is maintained by Pydantic with sources per price, one data set shared with their Python
//   package; tokenlens's prices are a snapshot of the community models.dev catalogue and its own
//   README calls its costs "rough".
// The data is the one bundled with the installed version (no network at run time): prices are
// updated by upgrading the package (docs/semantic-conventions.md, "Updating prices").
//
// calcPrice costs more a call than storing the span costs the writer (docs/benchmarks.md#figures-behind-code-comments-2026-12-06), so a model is
// looked up once (cached) and priced from its rates here; models whose prices change with time or
// that charge per request go through calcPrice every time. test/price-table.test.ts checks the
// two give the same price for every model of the bundled catalogue.

// The price catalogue is loaded on the first price asked for, not at import: only the writer (and
// the backfill) price spans, and the catalogue costs every other process memory it never uses
// (docs/benchmarks.md#figures-behind-code-comments-2026-12-06; ingest reads this package for the conventions alone). Its CommonJS build is required
// synchronously, so pricing stays a plain function call.
let loadedCalcPrice: typeof CalcPrice | undefined
const calcPrice: typeof CalcPrice = (...args) => {
  loadedCalcPrice ??= (createRequire(import.meta.url)('@pydantic/genai-prices') as { calcPrice: typeof CalcPrice }).calcPrice
  return loadedCalcPrice(...args)
}

/** Canonical vendor (vendor-names.ts) → genai-prices provider id. */
const PROVIDER_IDS: Readonly<Record<string, string>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  'azure.ai.openai': 'azure',
  'azure.ai.inference': 'azure',
  'aws.bedrock': 'aws',
  'gcp.gemini': 'google',
  'gcp.vertex_ai': 'google',
  'gcp.gen_ai': 'google',
  mistral_ai: 'mistral',
  x_ai: 'x-ai',
  cohere: 'cohere',
  groq: 'groq',
  deepseek: 'deepseek',
  perplexity: 'perplexity',
  fireworks: 'fireworks',
  together: 'together',
  togetherai: 'together',
  cerebras: 'cerebras',
  openrouter: 'openrouter',
  moonshot: 'moonshotai',
  novita: 'novita',
}

/** The genai-prices provider a vendor is priced by, if it is one of theirs. */
const priceProviderOf = (vendor: string | null): string | undefined => (vendor === null ? undefined : PROVIDER_IDS[vendor])

interface ResolvedModel {
  /** The provider narrowed to this one model, so calcPrice's slow path does not search again. */
  provider: Provider
  model: ModelInfo
  /** Plain per-token prices with no time or per-request part: priced here. */
  rates: ModelPrice | null
}

// Units charged whatever the token counts: a model with one is priced by calcPrice itself.
const PER_CALL_KEYS = new Set(['requests_kcount'])

function fastRates(model: ModelInfo): ModelPrice | null {
  if (Array.isArray(model.prices)) return null
  return Object.keys(model.prices).some((key) => PER_CALL_KEYS.has(key)) ? null : model.prices
}

// (provider id, model name) → the model, or null when the table does not know it. Bounded: a
// client inventing model names must not grow the writer without limit.
const resolved = new Map<string, ResolvedModel | null>()
const MAX_RESOLVED = 10_000
const PROBE = { input_tokens: 1, output_tokens: 1 }

function lookUp(model: string, providerId: string | undefined): ResolvedModel | null {
  let found: ReturnType<typeof calcPrice>
  try {
    found = calcPrice(PROBE, model, providerId === undefined ? {} : { providerId })
  } catch {
    return null
  }
  if (found === null) return null
  return { provider: { ...found.provider, models: [found.model] }, model: found.model, rates: fastRates(found.model) }
}

function resolve(model: string, providerId: string | undefined): ResolvedModel | null {
  const key = `${providerId ?? ''}\u0000${model}`
  let entry = resolved.get(key)
  if (entry === undefined) {
    // A vendor's own list first; then any provider's, for clients that report a vendor the table
    // does not price by (a proxy, an OpenAI-compatible gateway) or a model its vendor does not list.
    entry = (providerId === undefined ? null : lookUp(model, providerId)) ?? lookUp(model, undefined)
    if (resolved.size >= MAX_RESOLVED) resolved.clear()
    resolved.set(key, entry)
  }
  return entry
}

/** A TieredPrices rate applies to the whole call once its input passes the tier's start. */
function rateAt(price: ModelPrice[string], inputTokens: number): number | undefined {
  if (price === undefined || typeof price === 'number') return price
  let rate = (price as TieredPrices).base
  for (const tier of (price as TieredPrices).tiers) if (inputTokens > tier.start) rate = tier.price
  return rate
}

/** The table's price of a call to `model` at `at`, or null when the table does not know the model. */
export function tablePrice(model: string, vendor: string | null, tokens: PricedTokens, at: Date): Cost | null {
  return providerPrice(model, priceProviderOf(vendor), tokens, at)
}

/** tablePrice by genai-prices provider id (undefined: any provider). */
export function providerPrice(model: string, providerId: string | undefined, tokens: PricedTokens, at: Date): Cost | null {
  const entry = resolve(model, providerId)
  if (entry === null) return null
  const { rates } = entry
  if (rates !== null) {
    return costAtRates(tokens, {
      input: rateAt(rates.input_mtok, tokens.input) ?? 0,
      output: rateAt(rates.output_mtok, tokens.input) ?? 0,
      cacheRead: rateAt(rates.cache_read_mtok, tokens.input),
      cacheWrite: rateAt(rates.cache_write_mtok, tokens.input),
      reasoning: rateAt(rates.output_reasoning_mtok, tokens.input),
    })
  }
  try {
    const price = calcPrice(genaiUsage(tokens), model, { provider: entry.provider, timestamp: at })
    return price === null ? null : roundedCost(price.input_price, price.output_price, price.total_price)
  } catch {
    return null
  }
}

/** The counts as genai-prices names them (only those reported, as it validates each). */
export function genaiUsage(tokens: PricedTokens): Record<string, number> {
  const usage: Record<string, number> = { input_tokens: tokens.input, output_tokens: tokens.output }
  if (tokens.cacheRead > 0) usage.cache_read_tokens = tokens.cacheRead
  if (tokens.cacheWrite > 0) usage.cache_write_tokens = tokens.cacheWrite
  if (tokens.reasoning > 0) usage.output_reasoning_tokens = tokens.reasoning
  return usage
}
