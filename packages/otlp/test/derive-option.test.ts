import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readdirSync, readFileSync } from 'node:fs'
import { decodeTraceBody, type SpanRecord } from '../src/index.ts'

// Ingest decodes without deriving the LLM fields (it only counts and validates the spans it
// queues as bytes); the writer decodes the same bytes with them. Both must keep the same spans.

const conventions = new URL('../../../test-fixtures/llm-conventions/', import.meta.url)
const bodies = readdirSync(conventions).filter((name) => name.endsWith('.json')).map((name) => ({ name, body: readFileSync(new URL(name, conventions)) }))

const llmFields = ['llmVendor', 'llmModel', 'llmResponseModel', 'llmRequestType', 'inputTokens', 'outputTokens', 'totalTokens', 'sessionId', 'userId', 'costSource'] as const
const withoutLlmFields = (span: SpanRecord) => Object.fromEntries(Object.entries(span).filter(([key]) => !(llmFields as readonly string[]).includes(key) && !/Tokens|CostUsd|tokensEstimated/.test(key)))

describe('decoding without deriving the LLM fields', () => {
  it('keeps exactly the spans, and every other field, that decoding with them keeps', () => {
    assert.ok(bodies.length >= 5)
    for (const { name, body } of bodies) {
      const derived = decodeTraceBody(body, 'json')
      const counted = decodeTraceBody(body, 'json', { derive: false })
      assert.equal(counted.spans.length, derived.spans.length, name)
      assert.equal(counted.rejected, derived.rejected, name)
      assert.deepEqual(counted.spans.map(withoutLlmFields), derived.spans.map(withoutLlmFields), name)
    }
  })

  it('derives nothing, where deriving finds a model in every convention', () => {
    for (const { name, body } of bodies) {
      assert.ok(decodeTraceBody(body, 'json').spans.some((span) => span.llmModel !== null), `${name} has an LLM span`)
      for (const span of decodeTraceBody(body, 'json', { derive: false }).spans) {
        assert.deepEqual(llmFields.map((field) => span[field] ?? null), llmFields.map(() => null), name)
        assert.equal(span.tokensEstimated, false)
      }
    }
  })
})
