import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { TextFilterWords } from '../src/text-filter.ts'

// A trace's words decide which searches find it: every word added must come back out of hashes(),
// once, however the table was sized and grown on the way.

const sorted = (hashes: Uint32Array): number[] => [...hashes].sort((a, b) => a - b)

describe('TextFilterWords', { timeout: 30_000 }, () => {
  it('holds nothing, and makes no filter, until a word is added', () => {
    const words = new TextFilterWords()
    assert.equal(words.size, 0)
    assert.deepEqual([...words.hashes()], [])
    assert.equal(words.toBase64(), null)
    assert.equal(words.toHex(), null)
  })

  it('keeps every distinct hash once, added in batches across many growths', () => {
    const words = new TextFilterWords()
    const expected = new Set<number>()
    // Batches of 1 to 300 hashes, repeats among them, 5,000 distinct in all.
    for (let batch = 1; expected.size < 5_000; batch = (batch * 7) % 301) {
      const hashes = Uint32Array.from({ length: batch }, (_, i) => ((expected.size + i) * 2_654_435_761) % 1_073_741_824)
      words.addHashes(hashes)
      words.addHashes(hashes.subarray(0, batch >>> 1))
      for (const hash of hashes) expected.add(hash)
      assert.equal(words.size, expected.size)
    }
    assert.deepEqual(sorted(words.hashes()), [...expected].sort((a, b) => a - b))
  })

  it('reads the same words from JSON text whether it comes first or after hashes', () => {
    const text = Buffer.from(JSON.stringify({ prompt: 'Where is order #10042? The box was crushed.', answer: 'Order 10042 ships today' }))
    const fromText = new TextFilterWords()
    fromText.addJson(text)
    // prompt where is order 10042 the box was crushed answer ships today: order and 10042 twice
    assert.equal(fromText.size, 12)
    const afterHashes = new TextFilterWords()
    afterHashes.addHashes(TextFilterWords.hashesOfBase64(fromText.toBase64() as string).subarray(0, 3))
    afterHashes.addJson(text)
    assert.deepEqual(sorted(afterHashes.hashes()), sorted(fromText.hashes()))
    assert.equal(afterHashes.toHex(), fromText.toHex())
  })

  it('answers alike for hashes kept as given and hashes placed in its table', () => {
    const text = Buffer.from(JSON.stringify({ prompt: 'Where is order #10042? The box was crushed.', answer: 'Order 10042 ships today' }))
    const source = new TextFilterWords()
    source.addJson(text)
    // A view into a larger array, as a delta's hashes may be: its offset must not show.
    const padded = new Uint32Array(source.size + 2)
    padded.set(source.hashes(), 2)
    const given = new TextFilterWords()
    given.addHashes(padded.subarray(2))
    const placed = new TextFilterWords()
    placed.addHashes(padded.subarray(2, 6))
    placed.addHashes(padded.subarray(6))
    assert.equal(given.size, 12)
    assert.equal(given.toHex(), placed.toHex())
    assert.deepEqual(sorted(TextFilterWords.hashesOfBase64(given.toBase64() as string)), sorted(placed.hashes()))
    given.addJson(Buffer.from('"a new word"'))
    placed.addJson(Buffer.from('"a new word"'))
    assert.equal(given.size, 15)
    assert.deepEqual(sorted(given.hashes()), sorted(placed.hashes()))
    assert.equal(given.toHex(), placed.toHex())
  })
})
