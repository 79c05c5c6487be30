import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { addDecimals, DecimalSum } from '../src/exact-decimal.ts'

// A trace's cost must equal the sum of its spans' stored costs to the last digit, as Postgres's
// sum(numeric) gives it: a running sum that drifted would show a trace costing a hair more or
// less than its spans.

describe('DecimalSum', { timeout: 30_000 }, () => {
  it('sums decimals exactly, whatever their scales and exponents', () => {
    const sum = new DecimalSum()
    for (const value of [0.1, 0.2, 1e-7, '12', 3.5e-10, -0.05, '0.000001230', 2.5e21]) sum.add(value)
    // 0.1 + 0.2 + 0.0000001 + 12 + 0.00000000035 - 0.05 + 0.00000123 + 2500000000000000000000
    assert.equal(sum.text, '2500000000000000000012.25000133035')
  })

  it('ends where a sum carried as text from value to value ends (as the fold merges deltas)', () => {
    const values = Array.from({ length: 500 }, (_, i) => (i % 7 === 0 ? `${i}.${i}e-9` : ((i * 0.000123) % 0.9) / 3))
    const sum = new DecimalSum()
    let text: string | null = null
    for (const value of values) {
      sum.add(value)
      text = addDecimals(text, value)
      assert.equal(sum.text, text)
    }
  })

  it('is null with nothing added, and one value is its own text without an exponent', () => {
    const sum = new DecimalSum()
    assert.equal(sum.text, null)
    sum.add(1.5e-7)
    assert.equal(sum.text, '0.00000015')
    const text = new DecimalSum()
    text.add('0.250')
    assert.equal(text.text, '0.25')
  })
})

describe('addDecimals', { timeout: 30_000 }, () => {
  it('adds two decimals exactly, null standing for a cost no span reported', () => {
    assert.equal(addDecimals('0.1', 0.2), '0.3')
    assert.equal(addDecimals('2500000000000000000000', '-0.000001'), '2499999999999999999999.999999')
    assert.equal(addDecimals(null, 1e-7), '0.0000001')
    assert.equal(addDecimals('1.50', null), '1.50')
    assert.equal(addDecimals(null, null), null)
    // Exponents in either case and with a sign, as costs given as text may spell them.
    assert.equal(addDecimals('1.5E-3', '-2.5e-4'), '0.00125')
    assert.equal(addDecimals('-12e+2', '0.5'), '-1199.5')
  })
})
