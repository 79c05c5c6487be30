import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { seededRandom } from '@tracewell/test-support'
import { parseJsonText } from '../src/index.ts'

// Characters that force escapes (backslash, quote, controls, a lone surrogate) among plain ones.
const alphabet = ['a', 'b', '.', '\\', '"', '\t', '\n', '\u001c', '\b', '/', 'é', '😀', '\ud800', '1']

function randomKey(next: () => number): string {
  if (next() < 0.05) return '__proto__'
  const length = 1 + Math.floor(next() * 4)
  let key = 'k.'
  for (let i = 0; i < length; i++) key += alphabet[Math.floor(next() * alphabet.length)]
  return key
}

function randomValue(next: () => number, depth: number): unknown {
  const roll = next()
  if (depth > 2 || roll < 0.4) return roll < 0.2 ? randomKey(next) : Math.floor(roll * 1000)
  if (roll < 0.55) return Array.from({ length: Math.floor(next() * 3) }, () => randomValue(next, depth + 1))
  const object: Record<string, unknown> = {}
  const size = Math.floor(next() * 5)
  for (let i = 0; i < size; i++) {
    Object.defineProperty(object, randomKey(next), { value: randomValue(next, depth + 1), enumerable: true, writable: true, configurable: true })
  }
  return object
}

describe('parseJsonText', () => {
  it('decodes a key written with an escape after a key with a backslash of the same length', () => {
    // The V8 defect this works around: after `"p\\"`, the key `"p\t"` came back as `p\`.
    for (const escape of ['\\t', '\\n', '\\"', '\\/', '\\u001c']) {
      const prefix = `once.${escape.length}.${escape.charCodeAt(1)}`
      assert.deepEqual(Object.keys(parseJsonText(`{"${prefix}\\\\":1}`) as object), [`${prefix}\\`])
      const expected = JSON.parse(`"${prefix}${escape}"`) as string
      assert.deepEqual(Object.keys(parseJsonText(`{"${prefix}${escape}":1}`) as object), [expected], escape)
      const nested = parseJsonText(`{"x":[{"${prefix}\\\\":1, "${prefix}${escape}" : 2}]}`) as { x: object[] }
      assert.deepEqual(Object.keys(nested.x[0] as object), [`${prefix}\\`, expected])
    }
  })

  it('round-trips 3000 random documents with escape-heavy keys, nesting and duplicates (seeded)', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const next = seededRandom(seed)
      const document = { spans: Array.from({ length: 1 + Math.floor(next() * 4) }, () => randomValue(next, 0)) }
      const text = seed % 2 === 0 ? JSON.stringify(document) : JSON.stringify(document, null, 2)
      assert.deepStrictEqual(parseJsonText(text), document, `seed ${seed}: ${text}`)
    }
  })

  it('keeps JSON.parse semantics for duplicates, __proto__ and integer-like keys', () => {
    const duplicates = parseJsonText('{"a":1,"\\u0061":2,"b\\t":3,"b\\u0009":4}') as Record<string, number>
    assert.deepEqual(Object.entries(duplicates), [['a', 2], ['b\t', 4]])
    const proto = parseJsonText('{"__proto__":{"x\\n":1},"y\\\\":2}') as Record<string, unknown>
    assert.equal(Object.getPrototypeOf(proto), Object.prototype)
    assert.deepEqual(Object.keys(proto), ['__proto__', 'y\\'])
    assert.deepEqual(Object.keys(proto['__proto__'] as object), ['x\n'])
    assert.deepEqual(Object.keys(parseJsonText('{"b":1,"\\u0031":2,"0":3}') as object), ['0', '1', 'b'])
  })

  it('leaves values that only look like keys alone', () => {
    const text = JSON.stringify({ content: 'he said \\"x\\": 1', list: ['x\\', ':'], nested: '{"role\\t": "user"}' })
    assert.deepStrictEqual(parseJsonText(text), JSON.parse(text))
  })

  it('throws what JSON.parse throws for malformed text', () => {
    for (const text of ['{"a\\', '{"a\\t":1', '{"a\\q":1}', '', '{"a":1}x', '{"a\\\\" 1}']) {
      assert.throws(() => parseJsonText(text), (error: Error) => {
        assert.throws(() => JSON.parse(text), { name: error.name, message: error.message })
        return true
      }, text)
    }
  })
})

it('hands a reviver the source text of numbers, under plain and escaped keys alike', () => {
  const keepDigits = (_key: string, value: unknown, context?: { source?: string }) => (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) ? context?.source : value)
  assert.deepEqual(parseJsonText('{"a":9007199254740993,"b":[1,2.5]}', keepDigits), { a: '9007199254740993', b: [1, 2.5] })
  assert.deepEqual(parseJsonText('{"a\\\\":1,"a\\t":9007199254740993}', keepDigits), { 'a\\': 1, 'a\t': '9007199254740993' })
})
