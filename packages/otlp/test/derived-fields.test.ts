import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeJsonTraces } from '../src/index.ts'
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

  it('prefer llm.* over gen_ai.* over langtrace.service.name for the vendor', () => {
    assert.equal(decodeWith({ 'langtrace.service.name': s('c'), 'gen_ai.system': s('b'), 'llm.vendor': s('a') }).llmVendor, 'a')
    assert.equal(decodeWith({ 'langtrace.service.name': s('c'), 'gen_ai.system': s('b') }).llmVendor, 'b')
    assert.equal(decodeWith({ 'langtrace.service.name': s('c') }).llmVendor, 'c')
    assert.equal(decodeWith({ 'llm.vendor': i(1), 'gen_ai.system': s('b') }).llmVendor, 'b')
  })

  it('pick the model from request then response attributes', () => {
    assert.equal(decodeWith({ 'gen_ai.response.model': s('d'), 'llm.response.model': s('c'), 'gen_ai.request.model': s('b') }).llmModel, 'b')
    assert.equal(decodeWith({ 'gen_ai.response.model': s('d'), 'llm.response.model': s('c') }).llmModel, 'c')
    assert.equal(decodeWith({ 'gen_ai.response.model': s('gpt-4o-2024-08-06') }).llmModel, 'gpt-4o-2024-08-06')
  })

  it('pick the request type', () => {
    assert.equal(decodeWith({ 'gen_ai.operation.name': s('chat') }).llmRequestType, 'chat')
    assert.equal(decodeWith({ 'llm.request.type': s('completion'), 'gen_ai.operation.name': s('chat') }).llmRequestType, 'completion')
  })

  it('read tokens from intValue, integral doubleValue or numeric strings, and sum a missing total', () => {
    const span = decodeWith({ 'gen_ai.usage.input_tokens': { doubleValue: 10 }, 'gen_ai.usage.completion_tokens': s('5') })
    assert.equal(span.inputTokens, 10)
    assert.equal(span.outputTokens, 5)
    assert.equal(span.totalTokens, 15)
    const reported = decodeWith({ 'llm.usage.prompt_tokens': i('3'), 'llm.usage.completion_tokens': i(4), 'gen_ai.usage.total_tokens': i(99) })
    assert.equal(reported.totalTokens, 99)
    assert.equal(decodeWith({ 'gen_ai.usage.prompt_tokens': i(8) }).inputTokens, 8)
  })

  it('treat non-numeric token values as unknown, not as errors', () => {
    const span = decodeWith({
      'llm.usage.prompt_tokens': s('many'),
      'gen_ai.usage.input_tokens': { doubleValue: 2.5 },
      'llm.usage.completion_tokens': { doubleValue: 'NaN' },
      'llm.usage.total_tokens': i(-1),
    })
    assert.equal(span.inputTokens, null)
    assert.equal(span.outputTokens, null)
    assert.equal(span.totalTokens, null)
    assert.equal(decodeWith({ 'llm.usage.prompt_tokens': s('many'), 'gen_ai.usage.input_tokens': i(6) }).inputTokens, 6)
  })
})
