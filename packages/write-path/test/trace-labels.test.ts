import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeSpanRecordsToStore, decodeTraceBody, encodeSpanRecords, MAX_KEY_FIELD_LENGTH } from '@tracewell/otlp'
import { JsonTextBytes } from '@tracewell/json-text'
import { spanLabels, spanPrompt, spanTags } from '../src/trace-labels.ts'

/** An OTLP JSON body of one span with one attribute. */
function otlpSpan(): string {
  const span = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'chat', startTimeUnixNano: '1700000000000000000', endTimeUnixNano: '1700000000000000001', attributes: { 'llm.vendor': { stringValue: 'openai' } } }
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: {} }, scopeSpans: [{ spans: [span] }] }] })
}

// The prompts and tags a span gives its trace (dashboards' groupBy prompt and tag).

describe('trace labels', () => {
  it('reads a prompt as promptset:version, from Tracewell’s or Langfuse’s attributes', () => {
    assert.equal(spanPrompt({ 'tracewell.prompt.promptset_id': { stringValue: 'ps-1' }, 'tracewell.prompt.version': { intValue: '3' } }), 'ps-1:3')
    assert.equal(spanPrompt({ 'langfuse.observation.prompt.name': { stringValue: 'support' }, 'langfuse.observation.prompt.version': { doubleValue: 2 } }), 'support:2')
    // A promptset without its version is no prompt version.
    assert.equal(spanPrompt({ 'langfuse.observation.prompt.name': { stringValue: 'support' } }), null)
    assert.equal(spanPrompt({}), null)
  })

  it('reads tags from a list, a JSON array’s text or a single string, without repeats', () => {
    assert.deepEqual(spanTags({ 'langfuse.trace.tags': { arrayValue: { values: [{ stringValue: 'beta' }, { stringValue: 'vip' }, { stringValue: 'beta' }] } } }), ['beta', 'vip'])
    assert.deepEqual(spanTags({ 'tag.tags': { stringValue: '["a", "b", 3]' } }), ['a', 'b'])
    assert.deepEqual(spanTags({ 'tag.tags': { stringValue: 'solo' }, 'langfuse.trace.tags': { arrayValue: { values: [{ stringValue: 'solo' }] } } }), ['solo'])
    assert.deepEqual(spanTags({ 'tag.tags': { stringValue: '[not json' } }), ['[not json'])
    assert.deepEqual(spanTags({ 'tag.tags': { boolValue: true } }), [])
  })

  it('cuts a long tag or prompt as the span’s model is cut, marked with its length', () => {
    const [tag] = spanTags({ 'tag.tags': { stringValue: 'x'.repeat(500) } })
    assert.equal(tag?.length, MAX_KEY_FIELD_LENGTH)
    assert.match(tag ?? '', /^x+…\[truncated by Tracewell; original length 500\]$/)
    const prompt = spanPrompt({ 'tracewell.prompt.promptset_id': { stringValue: 'p'.repeat(300) }, 'tracewell.prompt.version': { intValue: '3' } })
    assert.match(prompt ?? '', /^p+…\[truncated by Tracewell; original length 300\]:3$/)
  })

  it('reads them from spans as the writer gets them from the queue: attributes naming them parsed, the others as text', () => {
    const base = decodeTraceBody(Buffer.from(otlpSpan()), 'json').spans[0]
    assert.ok(base)
    const spans = [
      { ...base, attributes: { ...base.attributes, 'tracewell.prompt.promptset_id': { stringValue: 'ps-1' }, 'tracewell.prompt.version': { intValue: '3' } } },
      { ...base, attributes: { ...base.attributes, 'tag.tags': { arrayValue: { values: [{ stringValue: 'beta' }] } } } },
      // Naming a key in a value is not naming it.
      { ...base, attributes: { ...base.attributes, note: { stringValue: 'tag.tags' } } },
    ]
    const queued = decodeSpanRecordsToStore(encodeSpanRecords(spans))
    assert.deepEqual(queued.map((span) => spanLabels(span.attributes)), [{ prompt: 'ps-1:3', tags: [] }, { prompt: null, tags: ['beta'] }, { prompt: null, tags: [] }])
    assert.ok(queued[2]?.attributes instanceof JsonTextBytes, 'attributes naming no label stay text')
  })
})
