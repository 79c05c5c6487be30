import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { displayPrefix, generateApiKey, hashApiKey, secretsMatch } from '../src/index.ts'

describe('api keys', () => {
  it('are unique, prefixed by kind and carry at least 32 random bytes', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey('project')))
    assert.equal(keys.size, 1000)
    for (const key of keys) {
      assert.match(key, /^tw_proj_[A-Za-z0-9_-]{43}$/)
      assert.ok(Buffer.from(key.slice('tw_proj_'.length), 'base64url').length >= 32)
    }
    assert.match(generateApiKey('team'), /^tw_team_[A-Za-z0-9_-]{43}$/)
  })

  it('hash to SHA-256 hex, never containing the secret', () => {
    const key = generateApiKey('team')
    const hash = hashApiKey(key)
    assert.match(hash, /^[0-9a-f]{64}$/)
    assert.equal(hash, hashApiKey(key))
    assert.ok(!hash.includes(key.slice(8, 20)))
  })

  it('show a short display prefix only', () => {
    assert.equal(displayPrefix('tw_proj_AbCdEfGh'), 'tw_proj_AbCd')
    assert.equal(displayPrefix('0123456789abcdef'.repeat(4)), '01234567')
  })

  it('compare shared secrets regardless of length, refusing wrong ones', () => {
    assert.equal(secretsMatch('cron-secret', 'cron-secret'), true)
    assert.equal(secretsMatch('cron-secreT', 'cron-secret'), false)
    assert.equal(secretsMatch('cron', 'cron-secret'), false)
    assert.equal(secretsMatch('', 'cron-secret'), false)
  })
})
