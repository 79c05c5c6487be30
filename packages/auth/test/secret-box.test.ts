import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { encryptionKeyOf, openSecret, sealSecret } from '../src/index.ts'

describe('sealed secrets (AES-256-GCM)', () => {
  const key = encryptionKeyOf(randomBytes(32).toString('hex'))

  it('opens what it sealed, with a fresh nonce each time, the secret nowhere in the sealed text', () => {
    const secret = 'sk-live-0123456789abcdefghijklmnop'
    const a = sealSecret(secret, key, 'llm-connection:p1')
    const b = sealSecret(secret, key, 'llm-connection:p1')
    assert.notEqual(a, b)
    assert.match(a, /^v1:[A-Za-z0-9+/]+=*$/)
    assert.ok(!a.includes('sk-live') && !Buffer.from(a.slice(3), 'base64').toString('latin1').includes('sk-live'))
    assert.equal(openSecret(a, key, 'llm-connection:p1'), secret)
    assert.equal(openSecret(sealSecret('', key, 'c'), key, 'c'), '')
  })

  it('refuses another key, another context, or a changed byte', () => {
    const sealed = sealSecret('secret', key, 'llm-connection:p1')
    assert.throws(() => openSecret(sealed, encryptionKeyOf(randomBytes(32).toString('hex')), 'llm-connection:p1'), /unable to authenticate/)
    assert.throws(() => openSecret(sealed, key, 'llm-connection:p2'), /unable to authenticate/)
    const bytes = Buffer.from(sealed.slice(3), 'base64')
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1
    assert.throws(() => openSecret(`v1:${bytes.toString('base64')}`, key, 'llm-connection:p1'), /unable to authenticate/)
    assert.throws(() => openSecret('v0:abc', key, 'x'), /not a sealed secret/)
  })

  it('takes a key of exactly 64 hex characters', () => {
    assert.throws(() => encryptionKeyOf('ab'.repeat(31)), /64 hex characters/)
    assert.throws(() => encryptionKeyOf('zz'.repeat(32)), /64 hex characters/)
  })
})
