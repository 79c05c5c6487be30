import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_KEY_FIELD_LENGTH } from '@tracewell/otlp'
import { JsonTextBytes } from '@tracewell/json-text'
import { spanLabels, spanPrompt, spanTags } from '../src/trace-labels.ts'

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

  it('reads them from attributes still as queued text, parsing only a text that may hold their keys', () => {
    const attributes = {
      'tracewell.prompt.promptset_id': { stringValue: 'ps-1' }, 'tracewell.prompt.version': { intValue: '3' },
      'tag.tags': { arrayValue: { values: [{ stringValue: 'beta' }] } }, 'other': { stringValue: 'tag.tags' },
    }
    const text = (value: unknown) => new JsonTextBytes(Buffer.from(JSON.stringify(value)))
    assert.deepEqual(spanLabels(text(attributes)), { prompt: 'ps-1:3', tags: ['beta'] })
    assert.deepEqual(spanLabels(attributes), { prompt: 'ps-1:3', tags: ['beta'] })
    assert.deepEqual(spanLabels(text({ 'langfuse.trace.tags': { stringValue: '["x"]' } })), { prompt: null, tags: ['x'] })
    // A value that names a key is not the key.
    assert.deepEqual(spanLabels(text({ note: { stringValue: 'tag.tags' } })), { prompt: null, tags: [] })
    // Text naming none of the keys is not parsed at all (this one would not parse).
    assert.deepEqual(spanLabels(new JsonTextBytes(Buffer.from('{"model": '))), { prompt: null, tags: [] })
  })
})
