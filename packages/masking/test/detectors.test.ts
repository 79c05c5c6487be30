import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { maskerOf, type MaskingRule } from '../src/index.ts'

const maskWith = (rule: MaskingRule) => {
  const masker = maskerOf([rule])
  return (text: string) => masker.maskText(text)
}

// Each detector against what it must find and what it must leave: a false positive destroys data
// a team needs, a false negative keeps what it must not.
const cases: Array<{ rule: MaskingRule; masked: Array<[string, string]>; kept: string[] }> = [
  {
    rule: { detector: 'email' },
    masked: [
      ['write to alice.smith+tag@example.co.uk today', 'write to [REDACTED:email] today'],
      ['<bob@mail.example.com>', '<[REDACTED:email]>'],
    ],
    kept: ['no at sign here', 'user@localhost', '@handle on social', 'a@b', 'version 1.2@3'],
  },
  {
    rule: { detector: 'phone' },
    masked: [
      ['call +44 20 7946 0958 now', 'call [REDACTED:phone] now'],
      ['US (555) 123-4567', 'US [REDACTED:phone]'],
      ['555.123.4567', '[REDACTED:phone]'],
      ['+14155552671', '[REDACTED:phone]'],
    ],
    kept: ['on 2026-12-06', 'from 10.20.30.40', 'cost 100 000 000', 'order 12345678', 'took 1.25 s', 'v1.2.3'],
  },
  {
    rule: { detector: 'credit_card' },
    masked: [
      ['card 4111 1111 1111 1111 exp', 'card [REDACTED:credit_card] exp'],
      ['5500-0000-0000-0004', '[REDACTED:credit_card]'],
      ['amex 378282246310005', 'amex [REDACTED:credit_card]'],
    ],
    // The second fails the Luhn check by its last digit.
    kept: ['4111 1111 1111 1112', '4111111111111112', 'id 12345', 'ts 17334500000000000000000'],
  },
  {
    rule: { detector: 'iban' },
    masked: [
      ['pay to DE89 3704 0044 0532 0130 00 please', 'pay to [REDACTED:iban] please'],
      ['GB82WEST12345698765432', '[REDACTED:iban]'],
    ],
    kept: ['DE89 3704 0044 0532 0130 01', 'GB00WEST12345698765432', 'AB12 short'],
  },
  {
    rule: { detector: 'ip' },
    masked: [
      ['from 192.168.1.20 via', 'from [REDACTED:ip] via'],
      ['client 2001:db8::8a2e:370:7334', 'client [REDACTED:ip]'],
      ['::1', '[REDACTED:ip]'],
    ],
    kept: ['version 1.2.3.4.5', '999.1.1.1', 'at 12:30:45', 'ratio 1.5'],
  },
  {
    rule: { detector: 'secret' },
    masked: [
      ['key sk-proj-abcdefghijklmnopqrstuvwxyz012345', 'key [REDACTED:secret]'],
      ['sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz', '[REDACTED:secret]'],
      ['token ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'token [REDACTED:secret]'],
      ['AKIAIOSFODNN7EXAMPLE', '[REDACTED:secret]'],
      ['Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'Authorization: [REDACTED:secret]'],
      ['AIzaSyA1234567890abcdefghijklmnopqrstuv', '[REDACTED:secret]'],
    ],
    kept: ['the task-runner is skilled', 'sk-short', 'ghp_tooShort', 'AKIA lowercase akiaiosfodnn7example', 'bearer of news'],
  },
  {
    rule: { detector: 'regex', pattern: 'ACCT-[0-9]{6}', replacement: 'ACCT-$1' },
    masked: [['ref ACCT-123456 and ACCT-654321', 'ref ACCT-$1 and ACCT-$1']],
    kept: ['ACCT-12345', 'acct-123456'],
  },
]

describe('detectors', () => {
  for (const { rule, masked, kept } of cases) {
    it(`${rule.detector} masks what it is for`, () => {
      const mask = maskWith(rule)
      for (const [text, expected] of masked) assert.equal(mask(text), expected, text)
    })
    it(`${rule.detector} keeps what only looks like it`, () => {
      const mask = maskWith(rule)
      for (const text of kept) assert.equal(mask(text), text, text)
    })
  }

  it('uses a rule’s own replacement', () => {
    assert.equal(maskWith({ detector: 'email', replacement: '<email>' })('a@example.org'), '<email>')
  })

  it('runs in linear time on inputs that make backtracking engines stall', () => {
    const masker = maskerOf([{ detector: 'email' }, { detector: 'phone' }, { detector: 'credit_card' }, { detector: 'ip' }, { detector: 'secret' }, { detector: 'regex', pattern: '(a+)+$' }])
    const hostile = ['a'.repeat(200_000) + '@', '1 '.repeat(100_000) + 'x', ':'.repeat(100_000), 'a'.repeat(200_000) + '!']
    const started = performance.now()
    for (const text of hostile) masker.maskText(text)
    assert.ok(performance.now() - started < 5_000, `took ${Math.round(performance.now() - started)} ms`)
  })
})
