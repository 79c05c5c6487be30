import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { UsagePoint } from '../src/api/types.ts'
import { sideBySide } from '../src/lib/prompt-diff.ts'
import { chartRows, groupColours, scoreRows, seriesColours } from '../src/lib/usage-series.ts'

function point(bucket: string, group: string | null, costUsd: number): UsagePoint {
  return { bucket, group, traces: 1, spans: 1, errors: 0, inputTokens: 0, outputTokens: 0, costUsd, latencyP50Ms: null, latencyP95Ms: null }
}

describe('chartRows', () => {
  it('gives one row per bucket in time order, a column per group', () => {
    const { rows, groups } = chartRows([point('2026-01-02T00:00:00Z', 'gpt-4o', 2), point('2026-01-01T00:00:00Z', 'gpt-4o', 1), point('2026-01-01T00:00:00Z', 'claude', 5)], 'costUsd', true)
    assert.deepEqual(groups, ['claude', 'gpt-4o'])
    assert.deepEqual(rows, [
      { bucket: '2026-01-01T00:00:00Z', claude: 5, 'gpt-4o': 1 },
      { bucket: '2026-01-02T00:00:00Z', claude: 0, 'gpt-4o': 2 },
    ])
  })

  it('keeps the six largest groups and sums the rest as other', () => {
    const series = Array.from({ length: 10 }, (_, i) => point('2026-01-01T00:00:00Z', `u${i}`, i + 1))
    const { rows, groups } = chartRows(series, 'costUsd', true)
    assert.deepEqual(groups, ['u9', 'u8', 'u7', 'u6', 'u5', 'u4', 'other'])
    assert.equal(rows[0]?.other, 1 + 2 + 3 + 4)
  })

  it('names the series when not split, and the share without a value when split', () => {
    assert.deepEqual(chartRows([point('2026-01-01T00:00:00Z', null, 3)], 'costUsd', false).groups, ['all'])
    assert.deepEqual(chartRows([point('2026-01-01T00:00:00Z', null, 3), point('2026-01-01T00:00:00Z', 'gpt-4o', 1)], 'costUsd', true).groups, ['(none)', 'gpt-4o'])
  })
})

describe('groupColours', () => {
  it('gives a group the same colour whatever the chart, by its rank in traces', () => {
    const series = [point('2026-01-01T00:00:00Z', 'cheap', 9), { ...point('2026-01-01T00:00:00Z', 'dear', 1), traces: 5 }]
    const colourOf = groupColours(series, true)
    assert.deepEqual([colourOf('dear'), colourOf('cheap'), colourOf('other'), colourOf('unknown')], [seriesColours[0], seriesColours[1], seriesColours[7], seriesColours[7]])
  })
})

describe('sideBySide', () => {
  it('marks removed words on the left and added words on the right, keeping line breaks', () => {
    const diff = sideBySide('Hello ${name},\nbe brief.', 'Hello ${name},\nbe very brief.')
    assert.equal(diff.changed, true)
    assert.equal(diff.left.map((segment) => segment.text).join(''), 'Hello ${name},\nbe brief.')
    assert.equal(diff.right.map((segment) => segment.text).join(''), 'Hello ${name},\nbe very brief.')
    assert.deepEqual(diff.right.filter((segment) => segment.change === 'added').map((segment) => segment.text.trim()), ['very'])
    assert.deepEqual(diff.left.filter((segment) => segment.change === 'removed'), [])
    assert.equal(sideBySide('same', 'same').changed, false)
  })
})

describe('scoreRows', () => {
  it('puts each score’s average in its bucket, buckets in time order, names sorted, gaps absent', () => {
    const { rows, names } = scoreRows([
      { bucket: '2026-01-02T00:00:00.000Z', name: 'quality', average: 0.5, count: 2 },
      { bucket: '2026-01-01T00:00:00.000Z', name: 'quality', average: 1, count: 1 },
      { bucket: '2026-01-01T00:00:00.000Z', name: 'accuracy', average: 4, count: 3 },
    ])
    assert.deepEqual(names, ['accuracy', 'quality'])
    assert.deepEqual(rows, [
      { bucket: '2026-01-01T00:00:00.000Z', quality: 1, accuracy: 4 },
      { bucket: '2026-01-02T00:00:00.000Z', quality: 0.5 },
    ])
  })
})
