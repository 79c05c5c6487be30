import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { toStorableJson, toStorableText } from '@tracewell/db'
import { spanGenerator, storable } from './support/random-spans.ts'

describe('toStorableText', () => {
  it('replaces U+0000 with U+FFFD and leaves everything else', () => {
    assert.equal(toStorableText('a\0b\0'), 'a\ufffdb\ufffd')
    assert.equal(toStorableText('\\u0000 \ud800 😀'), '\\u0000 \ud800 😀', 'lone surrogates are left to the UTF-8 encoder')
  })
})

describe('toStorableJson', () => {
  const cases: Array<[string, string, string]> = [
    ['U+0000', String.raw`"a\u0000b"`, String.raw`"a\ufffdb"`],
    ['a lone high surrogate', String.raw`"\ud800x"`, String.raw`"\ufffdx"`],
    ['a lone high surrogate at the end', String.raw`"\udbff"`, String.raw`"\ufffd"`],
    ['a lone low surrogate', String.raw`"\udc00"`, String.raw`"\ufffd"`],
    ['upper-case hex', String.raw`"\uDFFF\uD800"`, String.raw`"\ufffd\ufffd"`],
    ['two high surrogates, then a low one', String.raw`"\ud83d\ud83d\ude00"`, String.raw`"\ufffd\ud83d\ude00"`],
    ['a low surrogate before a high one', String.raw`"\ude00\ud83d"`, String.raw`"\ufffd\ufffd"`],
    ['a pair split by an escaped backslash', String.raw`"\ud83d\\ude00"`, String.raw`"\ufffd\\ude00"`],
    ['an escaped backslash, then the letters u0000', String.raw`"\\u0000"`, String.raw`"\\u0000"`],
    ['an escaped backslash, then U+0000', String.raw`"\\\u0000"`, String.raw`"\\\ufffd"`],
    ['two escaped backslashes, then the letters ud800', String.raw`"\\\\ud800"`, String.raw`"\\\\ud800"`],
    ['in a key', String.raw`{"k\u0000":"v\udfff"}`, String.raw`{"k\ufffd":"v\ufffd"}`],
  ]
  for (const [what, json, expected] of cases) {
    it(`replaces or keeps ${what}`, () => assert.equal(toStorableJson(json), expected))
  }

  it('keeps escapes Postgres reads, and text without escapes, as they are', () => {
    for (const json of [String.raw`"\u0001\u001f\u00e9\u2028\ud83d\ude00\uDBFF\uDFFF\ud7ff\ue000"`, '"plain"', '{"a":[1,"\\\\",null]}', '']) {
      assert.equal(toStorableJson(json), json)
    }
  })

  it('makes the JSON.stringify of any string parse back as the string with U+FFFD in place of what Postgres cannot store', () => {
    const { randomSpan } = spanGenerator(7)
    for (let round = 0; round < 500; round++) {
      const value = randomSpan(true)
      const json = toStorableJson(JSON.stringify(value))
      assert.deepEqual(JSON.parse(json), storable(value))
      assert.doesNotMatch(json, /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f])/i)
    }
  })
})
