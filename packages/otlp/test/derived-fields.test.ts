import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeJsonTraces, MAX_KEY_FIELD_LENGTH, TRUNCATION_MARKER } from '../src/index.ts'
import type { SpanRecord } from '../src/index.ts'

// The query columns derived from attributes, with their precedence.

function decodeWith(attributes: Record<string, unknown>, resource: Record<string, unknown> = {}): SpanRecord {
  const { spans } = decodeJsonTraces({
    resourceSpans: [
      {
        resource: { attributes: resource },
        scopeSpans: [
          {
            spans: [
              {
                traceId: '995de3342686b2287bcc0988c6bd2737',
                spanId: 'a1cc6c3931297cac',
                name: 'op',
                startTimeUnixNano: '1795316906845000000',
                endTimeUnixNano: '1795316906945000001',
                attributes,
              },
            ],
          },
        ],
      },
    ],
  })
  return spans[0] as SpanRecord
}

const s = (stringValue: string): unknown => ({ stringValue })
const i = (intValue: number | string): unknown => ({ intValue })

describe('derived fields', () => {
  it('are null when nothing is known', () => {
    const span = decodeWith({})
    assert.deepEqual(
      [span.serviceName, span.serviceVersion, span.llmVendor, span.llmModel, span.llmRequestType, span.inputTokens, span.outputTokens, span.totalTokens],
      [null, null, null, null, null, null, null, null],
    )
    assert.equal(span.durationNs, '100000001')
  })

  it('read service name and version from string resource attributes only', () => {
    assert.equal(decodeWith({}, { 'service.name': s('api'), 'service.version': s('1.2') }).serviceVersion, '1.2')
    assert.equal(decodeWith({}, { 'service.name': i(7) }).serviceName, null)
    assert.equal(decodeWith({ 'service.name': s('span-level') }).serviceName, null)
  })

  // Which attribute fills which LLM column, and in which order, is @tracewell/llm-usage's table,
  // tested there per instrumentation library; here, that every column reaches the record.
  it('carry every LLM column and a cost the caller reported', () => {
    const span = decodeWith({
      'gen_ai.provider.name': s('OpenAI'), 'gen_ai.request.model': s('gpt-4o'), 'gen_ai.response.model': s('gpt-4o-2024-08-06'),
      'gen_ai.operation.name': s('chat'), 'gen_ai.usage.input_tokens': i(100), 'gen_ai.usage.output_tokens': i(20),
      'gen_ai.usage.cache_read.input_tokens': i(64), 'gen_ai.usage.cache_creation.input_tokens': i(8), 'gen_ai.usage.reasoning.output_tokens': i(4),
      'session.id': s('s1'), 'user.id': s('u1'), 'llm.cost.prompt': { doubleValue: 0.25 }, 'llm.cost.completion': { doubleValue: 0.5 },
    })
    assert.deepEqual(
      {
        llmVendor: span.llmVendor, llmModel: span.llmModel, llmResponseModel: span.llmResponseModel, llmRequestType: span.llmRequestType,
        inputTokens: span.inputTokens, outputTokens: span.outputTokens, totalTokens: span.totalTokens, cachedInputTokens: span.cachedInputTokens,
        cacheWriteInputTokens: span.cacheWriteInputTokens, reasoningTokens: span.reasoningTokens, sessionId: span.sessionId, userId: span.userId,
        inputCostUsd: span.inputCostUsd, outputCostUsd: span.outputCostUsd, totalCostUsd: span.totalCostUsd, costSource: span.costSource,
      },
      {
        llmVendor: 'openai', llmModel: 'gpt-4o', llmResponseModel: 'gpt-4o-2024-08-06', llmRequestType: 'chat', inputTokens: 100, outputTokens: 20,
        totalTokens: 120, cachedInputTokens: 64, cacheWriteInputTokens: 8, reasoningTokens: 4, sessionId: 's1', userId: 'u1',
        inputCostUsd: 0.25, outputCostUsd: 0.5, totalCostUsd: 0.75, costSource: 'attribute',
      },
    )
  })

  it('leave the cost to the writer when the caller reported none', () => {
    const span = decodeWith({ 'gen_ai.request.model': s('gpt-4o'), 'gen_ai.usage.input_tokens': i(100) })
    assert.deepEqual([span.inputCostUsd, span.outputCostUsd, span.totalCostUsd, span.costSource], [null, null, null, null])
  })

  it('cut the fields that are index keys to MAX_KEY_FIELD_LENGTH, with the marker, and keep the whole value in the attributes', () => {
    // Four bytes of UTF-8 a character: the longest a cut value can be in bytes.
    const long = '\u{1F600}'.repeat(3000)
    const span = decodeWith({
      'gen_ai.provider.name': s(long), 'gen_ai.request.model': s(long), 'gen_ai.response.model': s(`${long}!`), 'session.id': s(long), 'user.id': s(long),
    }, { 'service.name': s(long) })
    for (const field of ['serviceName', 'llmVendor', 'llmModel', 'llmResponseModel', 'sessionId', 'userId'] as const) {
      const value = span[field] as string
      assert.equal(value.length, MAX_KEY_FIELD_LENGTH, field)
      assert.ok(value.endsWith(`${TRUNCATION_MARKER}${long.length + (field === 'llmResponseModel' ? 1 : 0)}]`), field)
      assert.ok(Buffer.byteLength(value) <= 3 * MAX_KEY_FIELD_LENGTH, field)
    }
    assert.equal((span.attributes['gen_ai.request.model'] as { stringValue: string }).stringValue, long)
    assert.equal(decodeWith({ 'user.id': s('u'.repeat(MAX_KEY_FIELD_LENGTH)) }).userId, 'u'.repeat(MAX_KEY_FIELD_LENGTH))
  })
})
