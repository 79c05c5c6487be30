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
})
