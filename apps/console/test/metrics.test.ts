import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { describeFilter, formatMetric, formatSeconds, metricFilterOf, traceFiltersOf, traceListSearch } from '../src/lib/metrics.ts'
import { defaultTraceFilters } from '../src/lib/trace-filters.ts'

describe('metrics as monitors and dashboards show them', () => {
  it('formats each kind of metric as people read it', () => {
    assert.equal(formatMetric('error_rate', 0.5), '50.0%')
    assert.equal(formatMetric('judge_failure_rate', 0.012), '1.20%')
    assert.equal(formatMetric('latency_p95', 1850), '1.85 s')
    assert.equal(formatMetric('cost', 12.5), '$12.50')
    assert.equal(formatMetric('traces', 12_345), '12,345')
    assert.equal(formatMetric('score_avg', 0.8333), '0.83')
    assert.equal(formatMetric('error_rate', null), 'no data')
    assert.deepEqual([60, 300, 3_600, 86_400, 45].map(formatSeconds), ['1 min', '5 min', '1 h', '1 d', '45 s'])
  })

  it("keeps only the filter form's fields that narrow which traces count, and reads them back", () => {
    const filters = { ...defaultTraceFilters, service: ' chat ', model: '', status: 'error' as const, attr: ['env=prod'], range: '24h' as const, minCost: '1' }
    const filter = metricFilterOf(filters)
    assert.deepEqual(filter, { service: 'chat', status: 'error', attr: ['env=prod'] })
    assert.deepEqual(traceFiltersOf(filter), { ...defaultTraceFilters, service: 'chat', status: 'error', attr: ['env=prod'] })
    assert.equal(describeFilter(filter), 'service=chat, status=error, env=prod')
    assert.equal(describeFilter({}), 'all traces')
  })

  it('opens the trace list on the bucket of a point, its filter and its group', () => {
    const search = new URLSearchParams(traceListSearch('p1', { t: '2026-12-06T10:00:00.000Z', granularitySeconds: 900 }, { service: 'chat', attr: ['a=1', 'b=2'] }, 'model', 'gpt-4o'))
    assert.deepEqual(
      [...search.entries()],
      [
        ['project_id', 'p1'],
        ['from', '2026-12-06T10:00:00.000Z'],
        ['to', '2026-12-06T10:15:00.000Z'],
        ['service', 'chat'],
        ['attr', 'a=1'],
        ['attr', 'b=2'],
        ['model', 'gpt-4o'],
      ],
    )
    // A series with no value of its group (traces without a model) is not a filter the list has.
    assert.equal(new URLSearchParams(traceListSearch('p1', { t: '2026-12-06T10:00:00.000Z', granularitySeconds: 60 }, null, 'model', '(none)')).get('model'), null)
  })
})
