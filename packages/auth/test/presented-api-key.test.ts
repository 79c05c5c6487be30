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

test('other schemes, empty values and no credentials present nothing', () => {
  assert.equal(presentedApiKey({ authorization: 'Basic dXNlcjpwYXNz' }), undefined)
  assert.equal(presentedApiKey({ authorization: 'Bearer ' }), undefined)
  assert.equal(presentedApiKey({ 'x-api-key': '', authorization: 'Bearer tw_proj_abc' }), 'tw_proj_abc')
  assert.equal(presentedApiKey({}), undefined)
})
