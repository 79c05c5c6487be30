import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { activeFilterCount, readTraceFilters, traceListQuery, writeTraceFilters } from '../src/lib/trace-filters.ts'

describe('trace filters in the URL', () => {
  it('round-trips every filter through the query string, keeping the project', () => {
    const url = new URLSearchParams('project_id=p1&range=24h&service=billing&model=gpt-4o&vendor=openai&status=error&name=chat&attr=a%3D1&attr=b%3Dx%20y&session=s1&user=u1&min_duration_ms=250&min_cost=0.5&q=refund&sort=cost&order=asc&live=1&include_tracewell_calls=true')
    const filters = readTraceFilters(url)
    assert.deepEqual(filters, {
      range: '24h', service: 'billing', model: 'gpt-4o', vendor: 'openai', status: 'error', name: 'chat', attr: ['a=1', 'b=x y'], session: 's1', user: 'u1',
      minDurationMs: '250', minCost: '0.5', q: 'refund', sort: 'cost', order: 'asc', live: true, includeTracewellCalls: true,
    })
    assert.equal(writeTraceFilters(filters, url).toString(), 'project_id=p1&range=24h&service=billing&model=gpt-4o&vendor=openai&name=chat&session=s1&user=u1&min_duration_ms=250&min_cost=0.5&q=refund&status=error&attr=a%3D1&attr=b%3Dx+y&sort=cost&order=asc&live=1&include_tracewell_calls=true')
    // Tracewell's own calls are asked for with them (a switch, not a filter: it widens the list).
    assert.equal(traceListQuery(filters, Date.now()).include_tracewell_calls, 'true')
    // The time window, nine text filters, two attribute pairs and the status.
    assert.equal(activeFilterCount(filters), 13)
  })

  it('drops unknown values and defaults', () => {
    const filters = readTraceFilters(new URLSearchParams('range=2y&status=maybe&sort=colour&order=sideways&attr=novalue&service=%20&include_tracewell_calls=yes'))
    assert.deepEqual(filters, { attr: [], sort: 'time', order: 'desc', live: false, includeTracewellCalls: false })
    assert.equal(writeTraceFilters(filters).toString(), '')
  })

  it('asks the API for a window ending now, and leaves sorts the server does not know to the page', () => {
    const now = Date.parse('2026-01-02T00:00:00Z')
    const query = traceListQuery(readTraceFilters(new URLSearchParams('range=1h&sort=name&order=asc&attr=k%3Dv')), now)
    assert.deepEqual(Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)), { from: '2026-01-01T23:00:00.000Z', attr: ['k=v'] })
    const server = traceListQuery(readTraceFilters(new URLSearchParams('from=2026-01-01T00:00:00Z&to=2026-01-01T06:00:00Z&sort=duration&order=asc')), now)
    assert.deepEqual(Object.fromEntries(Object.entries(server).filter(([, value]) => value !== undefined)), {
      from: '2026-01-01T00:00:00Z', to: '2026-01-01T06:00:00Z', sort: 'duration', order: 'asc',
    })
  })

  it('filters and sorts by a score only with its name', () => {
    const now = Date.parse('2026-01-02T00:00:00Z')
    const defined = (query: Record<string, unknown>) => Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined))
    const filters = readTraceFilters(new URLSearchParams('score_name=accuracy&min_score=3&max_score=5&sort=score'))
    assert.deepEqual(defined(traceListQuery(filters, now)), { score_name: 'accuracy', min_score: '3', max_score: '5', sort: 'score' })
    // One filter: the score, however it is bounded.
    assert.equal(activeFilterCount(filters), 1)
    assert.equal(writeTraceFilters(filters).toString(), 'score_name=accuracy&min_score=3&max_score=5&sort=score')
    // Bounds or a score sort without a name would be refused by the API: they are not sent.
    assert.deepEqual(defined(traceListQuery(readTraceFilters(new URLSearchParams('min_score=3&score_value=good&sort=score')), now)), {})
  })
})
