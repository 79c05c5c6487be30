import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { hashPassword, passwordProblem, verifyDecoyPassword, verifyPassword } from '../src/index.ts'

describe('passwords', { timeout: 30_000 }, () => {
  it('hashes with Argon2id at OWASP parameters, each hash salted, and verifies only the right password', async () => {
    const hash = await hashPassword('correct horse battery staple')
    assert.match(hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    assert.notEqual(await hashPassword('correct horse battery staple'), hash)
    assert.equal(await verifyPassword('correct horse battery staple', hash), true)
    assert.equal(await verifyPassword('correct horse battery stapler', hash), false)
    assert.equal(await verifyPassword('anything', 'not a hash'), false)
    assert.equal(await verifyDecoyPassword('anything'), false)
  })

  it('refuses short passwords, one repeated character, and passwords holding the email name', () => {
    assert.equal(passwordProblem('short'), 'must be at least 12 characters long')
    assert.equal(passwordProblem('aaaaaaaaaaaaaaa'), 'must not be one character repeated')
    assert.equal(passwordProblem('my-alice.smith-password', { email: 'Alice.Smith@example.com' }), 'must not contain your email address')
    assert.equal(passwordProblem('a long enough passphrase'), undefined)
  })
})
