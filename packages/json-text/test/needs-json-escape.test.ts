import assert from 'node:assert/strict'
import { it } from 'node:test'
import { needsJsonEscape } from '../src/index.ts'

it('says whether JSON.stringify writes an escape sequence, as JSON.stringify itself shows', () => {
  const samples = ['gen_ai.usage.input_tokens', 'é😀/', 'a"b', 'a\\', 'tab\t', '\u001f', '\u007f', '\ud800', 'x\udc00', '😀\ud83d', '']
  for (const sample of samples) {
    assert.equal(needsJsonEscape(sample), JSON.stringify(sample).includes('\\'), JSON.stringify(sample))
  }
})
