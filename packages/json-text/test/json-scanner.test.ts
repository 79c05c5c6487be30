import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { seededRandom } from '@tracewell/test-support'
import { JsonScanner, scanJson, type JsonScanResult } from '../src/index.ts'

const scan = (text: string, limits?: { maxValues: number; maxDepth: number }) => scanJson(Buffer.from(text), limits)

/**
 * JSON.parse as the oracle: whether `text` is JSON and, when not, where the first character no
 * valid document can have there is. V8 names it in most messages; where it does not, the
 * shortest prefix that no longer begins a valid document says it (slow, fine for small texts).
 */
function parseVerdict(text: string): { valid: true } | { valid: false; position: number } {
  try {
    JSON.parse(text)
    return { valid: true }
  } catch (error) {
    const message = (error as Error).message
    const stated = /position (\d+)/.exec(message)?.[1]
    if (stated !== undefined) return { valid: false, position: Number(stated) }
    if (message.startsWith('Unexpected end of JSON input')) return { valid: false, position: text.length }
    let valid = 0
    let invalid = text.length
    while (invalid - valid > 1) {
      const middle = (valid + invalid) >>> 1
      if (beginsValidDocument(text.slice(0, middle))) valid = middle
      else invalid = middle
    }
    return { valid: false, position: valid }
  }
}

function beginsValidDocument(prefix: string): boolean {
  try {
    JSON.parse(prefix)
    return true
  } catch (error) {
    const message = (error as Error).message
    if (message.startsWith('Unexpected end of JSON input') || message.startsWith('Unterminated string')) return true
    const stated = /position (\d+)/.exec(message)?.[1]
    return stated !== undefined && Number(stated) >= prefix.length
  }
}

// Pieces spliced into valid documents: structure, escapes, multi-byte characters, number edge cases.
const pieces = ['{', '}', '[', ']', ',', ':', '"', '\\', 'a', 'é', '😀', '1', '0', '-', '.', 'e', '+', 'true', 'nul', '\n', '\u0001', '\\u00e9', '\\x', '1.5e3', '01', '"k":']

function randomValue(next: () => number, depth: number): unknown {
  const roll = next()
  if (depth > 3 || roll < 0.3) return [1, -2.5e-3, 'x"\\é😀\u0001', true, null, 0][Math.floor(next() * 6)]
  if (roll < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1))
  const object: Record<string, unknown> = {}
  for (let i = Math.floor(next() * 4); i > 0; i--) object[`k${i}${next() < 0.3 ? 'é\\"' : ''}`] = randomValue(next, depth + 1)
  return object
}

function mutated(next: () => number, text: string): string {
  let out = text
  for (let edits = Math.floor(next() * 3); edits > 0; edits--) {
    const at = Math.floor(next() * (out.length + 1))
    const piece = pieces[Math.floor(next() * pieces.length)] as string
    const mode = next()
    out = mode < 0.33 ? out.slice(0, at) + out.slice(at + 1) : mode < 0.66 ? out.slice(0, at) + piece + out.slice(at) : out.slice(0, at) + piece + out.slice(at + 1)
  }
  return out
}

describe('scanJson', () => {
  it('agrees with JSON.parse on validity and on the position of the first error (seeded)', () => {
    const next = seededRandom(20_140)
    let malformed = 0
    for (let i = 0; i < 3_000; i++) {
      const text = mutated(next, JSON.stringify(randomValue(next, 0), null, next() < 0.5 ? undefined : 1))
      const expected = parseVerdict(text)
      const result = scan(text)
      if (expected.valid) {
        assert.equal(result.kind, 'valid', text)
      } else {
        malformed++
        assert.equal(result.kind, 'malformed', text)
        assert.equal((result as { position: number }).position, expected.position, text)
      }
    }
    // The mutations must exercise the error paths, not only the valid one.
    assert.ok(malformed > 1_000, `${malformed} malformed cases`)
  })

  it('says what is wrong, in JSON.parse terms', () => {
    assert.deepEqual(scan('[1,2 x]'), { kind: 'malformed', position: 5, reason: "Unexpected token 'x'" })
    assert.deepEqual(scan('{"a": 1'), { kind: 'malformed', position: 7, reason: 'Unexpected end of JSON input' })
    assert.deepEqual(scan('["abc'), { kind: 'malformed', position: 5, reason: 'Unterminated string in JSON' })
    assert.deepEqual(scan('["a\u0001"]'), { kind: 'malformed', position: 3, reason: 'Bad control character in string literal' })
    assert.deepEqual(scan('["\\q"]'), { kind: 'malformed', position: 3, reason: 'Bad escaped character' })
    assert.deepEqual(scan('["\\u12G4"]'), { kind: 'malformed', position: 6, reason: 'Bad Unicode escape' })
    assert.deepEqual(scan('{} {}'), { kind: 'malformed', position: 3, reason: 'Unexpected non-whitespace character after JSON' })
    assert.deepEqual(scan(''), { kind: 'malformed', position: 0, reason: 'Unexpected end of JSON input' })
  })

  it('counts positions in UTF-16 code units, as JSON.parse does', () => {
    // é is 2 bytes and 1 code unit; 😀 is 4 bytes and 2 code units.
    assert.deepEqual(scan('["é😀" x]'), { kind: 'malformed', position: 7, reason: "Unexpected token 'x'" })
    assert.deepEqual(scan('[1, é]'), { kind: 'malformed', position: 4, reason: "Unexpected token 'é'" })
  })

  it('counts values and stops as soon as there are too many', () => {
    assert.deepEqual(scan('{"a":[1,"x",true,null,{}],"b":-1.5e3}'), { kind: 'valid', values: 8 })
    const limits = { maxValues: 8, maxDepth: 10 }
    assert.deepEqual(scan('{"a":[1,"x",true,null,{}],"b":-1.5e3}', limits), { kind: 'valid', values: 8 })
    // Nine values, then malformed: the count is reached first, so nothing past it is read.
    assert.deepEqual(scan('{"a":[1,"x",true,null,{}],"b":-1.5e3,"c":0 oops', limits), { kind: 'too-many-values', limit: 8 })
  })

  it('stops at the first level past the deepest nesting allowed', () => {
    assert.deepEqual(scan('[[[{"a":[]}]]]', { maxValues: 100, maxDepth: 5 }), { kind: 'valid', values: 5 })
    assert.deepEqual(scan(`${'['.repeat(6)}oops`, { maxValues: 100, maxDepth: 5 }), { kind: 'too-deep', limit: 5 })
  })

  it('gives the same answer whatever the chunks, and refuses before the rest arrives', () => {
    const texts = ['{"k\\u00e9y": ["é😀", -0.5e+2, [true, false, null]], "x": "\\"\\\\"}', '[1, 2, {"a": "b"} x', '["😀\\ud83d', '  123  ', '[1, 2']
    for (const text of texts) {
      const bytes = Buffer.from(text)
      const whole = scanJson(bytes)
      for (const size of [1, 2, 3, 7]) {
        const scanner = new JsonScanner()
        let result: JsonScanResult | undefined
        for (let at = 0; at < bytes.length && result === undefined; at += size) result = scanner.write(bytes.subarray(at, at + size))
        assert.deepEqual(result ?? scanner.end(), whole, `${text} in chunks of ${size}`)
      }
    }
    const scanner = new JsonScanner({ maxValues: 10, maxDepth: 10 })
    assert.equal(scanner.write(Buffer.from('[1,2,')), undefined)
    assert.deepEqual(scanner.write(Buffer.from('3,x')), { kind: 'malformed', position: 7, reason: "Unexpected token 'x'" })
  })
})
