import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { describe, it } from 'node:test'
import { createApp } from '../src/index.ts'
import { parseQueryString } from '../src/query-string.ts'
import { seededRandom } from '@tracewell/test-support'

// The parser Fastify uses when none is given (find-my-way's fast-querystring), found through
// Fastify's own dependencies: the reference ours must agree with.
const requireFromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'))
const requireFromRouter = createRequire(requireFromFastify.resolve('find-my-way'))
const fastQuerystring = requireFromRouter('fast-querystring') as { parse(query: string): Record<string, string | string[]> }

/** Names, values and their order, including repeated names: what two parses must share. */
const entries = (query: Record<string, string | string[]>) => JSON.stringify(Object.entries(query))

// Pieces that make parsing and decoding interesting: separators, `+`, escapes of every UTF-8
// length, and the invalid ones (overlong, surrogate, above U+10FFFF, truncated, not hex).
const pieces = [
  'a', 'b', 'variables.', '=', '&', '+', '%', '%2', '%20', '%2B', '%26', '%3D', '%25', '%41', '%7e', '%C3', '%C3%AB', '%c3%bc',
  '%E2%82%AC', '%F0%9F%98%80', '%C0%AF', '%C1%BF', '%E0%80%80', '%E0%A0%80', '%ED%9F%BF', '%ED%A0%80', '%EF%BF%BF', '%F0%8F%BF%BF',
  '%F4%8F%BF%BF', '%F4%90%80%80', '%F5%80%80%80', '%80', '%BF', '%C3%28', '%E2%82', '%zz', '%g1', '%1', 'ü', '😀', '__proto__', 'constructor',
]

function generator(seed: number) {
  const next = seededRandom(seed)
  return (length: number) => Array.from({ length }, () => pieces[Math.floor(next() * pieces.length)] as string).join('')
}

describe('parseQueryString', () => {
  it('decodes what the SDKs send as a form would: + is a space, %XX is UTF-8', () => {
    const sent = new URLSearchParams({ promptset_id: 'r1', 'variables.company': 'Acme & Co', 'variables.customer': 'Zoë Müller', 'variables.topic': 'refunds (100%) + more 😀' })
    assert.deepEqual({ ...parseQueryString(sent.toString()) }, {
      promptset_id: 'r1',
      'variables.company': 'Acme & Co',
      'variables.customer': 'Zoë Müller',
      'variables.topic': 'refunds (100%) + more 😀',
    })
  })

  it('gives what Fastify’s default parser gives, for fixed and generated query strings', () => {
    const fixed = [
      '', '&', '&&', '=', '==', 'a', 'a=', '=a', 'a=b=c', 'a=1&a=2&a=3', 'a=1&&b=2&', '+=+', 'a+b=c+d', '%=%', 'a%3Db=c%26d',
      '100%', 'x=100%25', 'x=%E2%82%AC%', 'x=%C3', 'x=%C3%', 'x=%C3%AB%', '__proto__=1&constructor=2&toString=3', 'x=%F0%9F%98%80%F0%9F%98%80',
    ]
    for (const query of fixed) assert.equal(entries(parseQueryString(query)), entries(fastQuerystring.parse(query)), JSON.stringify(query))
    for (let seed = 1; seed <= 3000; seed++) {
      const query = generator(seed)(1 + (seed % 24))
      assert.equal(entries(parseQueryString(query)), entries(fastQuerystring.parse(query)), `seed ${seed}: ${JSON.stringify(query)}`)
    }
  })

  it('returns objects without Object.prototype, so names like __proto__ are plain keys', () => {
    const query = parseQueryString('__proto__=x&hasOwnProperty=y')
    assert.equal(Object.getPrototypeOf(Object.getPrototypeOf(query)), null)
    assert.deepEqual(Object.keys(query), ['__proto__', 'hasOwnProperty'])
    assert.equal(query['__proto__'], 'x')
  })

  it('is the parser of every app createApp builds', async () => {
    const app = createApp({ logger: false })
    app.get('/echo', async (request) => ({ query: { ...(request.query as object) } }))
    const response = await app.inject({ url: '/echo?variables.a=x+y%20z&variables.a=%F0%9F%98%80&b=%zz+1' })
    assert.deepEqual(response.json(), { query: { 'variables.a': ['x y z', '😀'], b: '%zz 1' } })
  })
})
