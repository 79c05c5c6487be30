import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { calcPrice, findProvider, type ModelInfo } from '@pydantic/genai-prices'
import { seededRandom } from '@tracewell/test-support'
import type { PricedTokens } from '../src/index.ts'
import { genaiUsage, providerPrice } from '../src/price-table.ts'

// tablePrice prices most models from their cached rates instead of calling calcPrice (a costly
// call, see price-table.ts). This proves the two agree on every model of the bundled catalogue,
// for random calls (uncached, cached, cache writes, reasoning, past long-context tiers) at random
// times, so a new release of @pydantic/genai-prices with a pricing rule we do not mirror fails here.

const PROVIDERS = [
  'anthropic', 'arcee', 'avian', 'aws', 'azure', 'baseten', 'cerebras', 'cloudflare', 'cohere', 'cursor', 'deepseek', 'doubleword',
  'fireworks', 'github-copilot', 'google', 'groq', 'minimax', 'mistral', 'modal', 'moonshotai', 'novita', 'openai', 'openrouter',
  'ovhcloud', 'perplexity', 'quicksilverpro', 'together', 'typesafe', 'voyageai', 'x-ai', 'zai', 'zhipuai',
]

/** A model name the model's own match rule accepts. */
function nameOf(model: ModelInfo): string {
  const match = model.match as Record<string, unknown>
  if (typeof match.equals === 'string') return match.equals
  if (typeof match.starts_with === 'string') return match.starts_with
  return model.id
}

describe('the price table’s fast path', () => {
  it('prices every catalogued model as calcPrice does', () => {
    const random = seededRandom(20261124)
    const int = (max: number) => Math.floor(random() * max)
    let compared = 0
    for (const providerId of PROVIDERS) {
      const provider = findProvider({ providerId })
      assert.ok(provider, `genai-prices knows ${providerId}`)
      for (const model of provider.models) {
        const name = nameOf(model)
        for (let round = 0; round < 4; round++) {
          const input = int(round === 3 ? 400_000 : 20_000)
          const cacheRead = round % 2 === 1 ? int(input / 2) : 0
          const cacheWrite = round === 2 ? int(input / 4) : 0
          const output = int(5_000)
          const reasoning = round >= 2 ? int(output) : 0
          const tokens: PricedTokens = { input, cacheRead, cacheWrite, output, reasoning }
          const at = new Date(Date.UTC(2024, 0, 1) + int(3 * 365 * 24) * 3_600_000 + int(3_600_000))
          let expected: ReturnType<typeof calcPrice>
          try {
            expected = calcPrice(genaiUsage(tokens), name, { providerId, timestamp: at })
          } catch {
            continue // a model calcPrice itself refuses these counts for (e.g. priced by the hour only)
          }
          if (expected === null || expected.model.id !== model.id) continue
          const cost = providerPrice(name, providerId, tokens, at)
          assert.ok(cost, `${providerId}/${name} priced`)
          // Both sum floating-point products in their own order; the stored cost is rounded to 1e-12.
          const close = (x: number, y: number) => Math.abs(x - y) <= 1e-11 + 1e-9 * Math.abs(y)
          assert.ok(
            close(cost.inputCostUsd, expected.input_price) && close(cost.outputCostUsd, expected.output_price) && close(cost.totalCostUsd, expected.total_price),
            `${providerId}/${name} ${JSON.stringify(tokens)} at ${at.toISOString()}: ${JSON.stringify(cost)} vs ${expected.input_price} ${expected.output_price} ${expected.total_price}`,
          )
          compared++
        }
      }
    }
    assert.ok(compared > 4000, `compared ${compared} prices`)
  })
})

