import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_KEY_FIELD_LENGTH } from '@tracewell/otlp'
import { spanPrompt, spanTags } from '../src/trace-labels.ts'

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
})
