import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { JsonTextBytes } from '../src/index.ts'

// A span's attributes as the writer keeps them: the bytes ingest queued, read only when asked.

describe('JSON text kept as bytes', () => {
  const value = { 'a\\': { stringValue: 'backslash key' }, 'tag.tags': { stringValue: 'é😀' }, note: { stringValue: '"model": 1' } }
  const inBody = Buffer.concat([Buffer.from('head\n'), Buffer.from(JSON.stringify(value)), Buffer.from('tail')])
  const text = new JsonTextBytes(inBody.subarray(5, inBody.length - 4))

  it('gives the text, the value (keys with escapes too) and writes the value into JSON', () => {
    assert.equal(text.text(), JSON.stringify(value))
    assert.deepStrictEqual(text.value(), value)
    assert.equal(JSON.stringify({ attributes: text }), JSON.stringify({ attributes: value }))
  })

  it('says a key may be there only when the text holds it quoted', () => {
    assert.equal(text.mayHaveKey('tag.tags'), true)
    assert.equal(text.mayHaveKey('tag'), false)
    // Quotes inside a string are escaped, so a key quoted there is not mistaken for one.
    assert.equal(text.mayHaveKey('model'), false)
    // A whole string equal to the key is a false alarm, which only costs a parse.
    assert.equal(new JsonTextBytes(Buffer.from(JSON.stringify({ note: { stringValue: 'model' } }))).mayHaveKey('model'), true)
  })
})
