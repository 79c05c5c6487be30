import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { formatCost, formatCostExact } from '../src/lib/format.ts'

describe('formatCost', () => {
  it('shows three significant digits below a dollar (at least two decimals), never cut to zeros or in exponent form', () => {
    assert.equal(formatCost(0.000123), '$0.000123')
    assert.equal(formatCost(0.00012345), '$0.000123')
    assert.equal(formatCost(0.0000019), '$0.0000019')
    assert.equal(formatCost(0.0456), '$0.0456')
    assert.equal(formatCost(0.1), '$0.10')
    assert.equal(formatCost(0.5), '$0.50')
    assert.equal(formatCost(0.08), '$0.08')
    assert.equal(formatCost(0.999), '$0.999')
    assert.equal(formatCost(0.9999), '$1.00')
    assert.equal(formatCost(0.123456), '$0.123')
  })

  it('shows two decimals from a dollar on, with thousands separated', () => {
    assert.equal(formatCost(1), '$1.00')
    assert.equal(formatCost(12.5), '$12.50')
    assert.equal(formatCost(1234.567), '$1,234.57')
  })

  it('says unknown, nothing and less than a millionth plainly', () => {
    assert.equal(formatCost(null), '—')
    assert.equal(formatCost(undefined), '—')
    assert.equal(formatCost(Number.NaN), '—')
    assert.equal(formatCost(0), '$0')
    assert.equal(formatCost(0.00000012), '<$0.000001')
    assert.equal(formatCostExact(0.00000012), '$0.00000012')
    assert.equal(formatCostExact(0.000123), '$0.000123')
    assert.equal(formatCostExact(null), '')
  })
})
