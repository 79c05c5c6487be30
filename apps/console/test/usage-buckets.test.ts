import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { UsagePoint } from '../src/api/types.ts'
import { bucketStarts, chartRows, scoreRows } from '../src/lib/usage-series.ts'

// The buckets are the browser's days and hours: a zone with a daylight-saving change shows them.
process.env.TZ = 'Europe/Paris'

const day = (bucket: string, costUsd: number): UsagePoint => ({ bucket, group: null, traces: 1, spans: 1, errors: 0, inputTokens: 0, outputTokens: 0, costUsd, latencyP50Ms: null, latencyP95Ms: null })

describe('bucketStarts', () => {
  it('gives every local day of "last 7 days": the partial first day and today included', () => {
    const starts = bucketStarts(new Date('2026-11-19T12:34:00Z'), new Date('2026-11-26T12:34:00Z'), 'day')
    assert.deepEqual(starts, [
      '2026-11-18T23:00:00.000Z',
      '2026-11-19T23:00:00.000Z',
      '2026-11-20T23:00:00.000Z',
      '2026-11-21T23:00:00.000Z',
      '2026-11-22T23:00:00.000Z',
      '2026-11-23T23:00:00.000Z',
      '2026-11-24T23:00:00.000Z',
      '2026-11-25T23:00:00.000Z',
    ])
  })

  it('keeps a 25-hour day whole when the clocks go back', () => {
    assert.deepEqual(bucketStarts(new Date('2026-10-24T12:00:00Z'), new Date('2026-10-27T00:00:00Z'), 'day'), [
      '2026-10-23T22:00:00.000Z',
      '2026-10-24T22:00:00.000Z',
      '2026-10-25T23:00:00.000Z',
      '2026-10-26T23:00:00.000Z',
    ])
  })

  it('gives every hour, from the start of the hour the window starts in, up to the one it ends in', () => {
    assert.deepEqual(bucketStarts(new Date('2026-11-26T09:45:00Z'), new Date('2026-11-26T12:10:00Z'), 'hour'), [
      '2026-11-26T09:00:00.000Z',
      '2026-11-26T10:00:00.000Z',
      '2026-11-26T11:00:00.000Z',
      '2026-11-26T12:00:00.000Z',
    ])
    assert.equal(bucketStarts(new Date('2026-11-01T00:00:00Z'), new Date('2026-11-26T00:00:00Z'), 'hour').length, 25 * 24)
    assert.deepEqual(bucketStarts(new Date('2026-11-26T12:00:00Z'), new Date('2026-11-26T12:00:00Z'), 'hour'), [])
  })
})

describe('chartRows and scoreRows over every bucket', () => {
  const week = bucketStarts(new Date('2026-11-19T12:34:00Z'), new Date('2026-11-26T12:34:00Z'), 'day')

  it('draws the days without usage as empty bars, in time order', () => {
    // The API's answer for a week with usage on two days: two buckets.
    const { rows, groups } = chartRows([day('2026-11-25T23:00:00.000Z', 0.5), day('2026-11-20T23:00:00.000Z', 0.25)], 'costUsd', false, week)
    assert.deepEqual(groups, ['all'])
    assert.equal(rows.length, 8)
    assert.deepEqual(rows.map((row) => row.all), [0, 0, 0.25, 0, 0, 0, 0, 0.5])
    assert.deepEqual(rows.map((row) => row.bucket), week)
  })

  it('keeps a bucket the API answered outside the expected ones rather than lose its figures', () => {
    const { rows } = chartRows([day('2026-11-27T23:00:00.000Z', 1)], 'costUsd', false, week)
    assert.equal(rows.length, 9)
    assert.equal(rows.at(-1)?.all, 1)
  })

  it('leaves a score line empty where no score was given', () => {
    const { rows, names } = scoreRows([{ bucket: '2026-11-21T23:00:00.000Z', name: 'quality', average: 0.8, count: 2 }], week)
    assert.deepEqual(names, ['quality'])
    assert.equal(rows.length, 8)
    assert.deepEqual(rows.map((row) => row.quality), [undefined, undefined, undefined, 0.8, undefined, undefined, undefined, undefined])
  })
})
