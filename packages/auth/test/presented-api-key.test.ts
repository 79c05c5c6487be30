import assert from 'node:assert/strict'
import { test } from 'node:test'
import { presentedApiKey } from '../src/index.ts'

test('x-api-key is the key when it is sent', () => {
  assert.equal(presentedApiKey({ 'x-api-key': 'tw_proj_abc' }), 'tw_proj_abc')
})

test('Authorization: Bearer is the key when x-api-key is absent, whatever the scheme case', () => {
  assert.equal(presentedApiKey({ authorization: 'Bearer tw_proj_abc' }), 'tw_proj_abc')
  assert.equal(presentedApiKey({ authorization: 'bearer   tw_proj_abc ' }), 'tw_proj_abc')
  assert.equal(presentedApiKey({ authorization: ['Bearer tw_proj_first', 'Bearer tw_proj_second'] }), 'tw_proj_first')
})

test('x-api-key wins over Authorization', () => {
  assert.equal(presentedApiKey({ 'x-api-key': 'tw_proj_header', authorization: 'Bearer tw_proj_bearer' }), 'tw_proj_header')
})

test('Authorization: Basic presents its password, whatever the user name (Langfuse’s exporter)', () => {
  const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`
  assert.equal(presentedApiKey({ authorization: basic('pk-lf-public:tw_proj_abc') }), 'tw_proj_abc')
  assert.equal(presentedApiKey({ authorization: basic(':tw_proj_abc') }), 'tw_proj_abc', 'no user name')
  assert.equal(presentedApiKey({ authorization: basic('user:pass:with:colons') }), 'pass:with:colons')
  assert.equal(presentedApiKey({ authorization: basic('user-only') }), undefined, 'no password')
  assert.equal(presentedApiKey({ authorization: basic('user:') }), undefined, 'an empty password')
  assert.equal(presentedApiKey({ 'x-api-key': 'tw_proj_header', authorization: basic('u:tw_proj_basic') }), 'tw_proj_header')
})

test('other schemes, empty values and no credentials present nothing', () => {
  assert.equal(presentedApiKey({ authorization: 'Digest username="x"' }), undefined)
  assert.equal(presentedApiKey({ authorization: 'Bearer ' }), undefined)
  assert.equal(presentedApiKey({ 'x-api-key': '', authorization: 'Bearer tw_proj_abc' }), 'tw_proj_abc')
  assert.equal(presentedApiKey({}), undefined)
})
