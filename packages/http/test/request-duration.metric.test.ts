import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Histogram, Registry } from 'prom-client'
import { RequestDurationHistogram } from '../src/request-duration.metric.ts'

const upperBounds = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

/** Exposition lines with their labels in a canonical order, so two renderings can be compared. */
function canonicalLines(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line)
      assert.ok(match, `unexpected line ${line}`)
      const labels = (match[2] ?? '').split(',').filter(Boolean).sort().join(',')
      return `${match[1]}{${labels}} ${match[3]}`
    })
    .sort()
}

describe('RequestDurationHistogram', () => {
  it('renders exactly what prom-client’s Histogram renders for the same observations', async () => {
    const ours = new Registry()
    const theirs = new Registry()
    const histogram = new RequestDurationHistogram({ upperBounds, registry: ours })
    const reference = new Histogram({ name: 'tracewell_http_request_duration_seconds', help: 'HTTP request duration by method, route and status', labelNames: ['method', 'route', 'status'], buckets: upperBounds, registers: [theirs] })
    const observations: [string, string, number, number][] = [
      ['GET', '/api/promptset', 200, 0.0004],
      ['GET', '/api/promptset', 200, 0.001], // on a bound: counted in that bucket (le is inclusive)
      ['GET', '/api/promptset', 200, 0.0123],
      ['GET', '/api/promptset', 404, 0.003],
      ['POST', '/api/trace', 200, 7.5], // above every bound: only +Inf
      ['GET', 'unmatched', 404, 0.0002],
    ]
    for (const [method, route, status, seconds] of observations) {
      histogram.observe(method, route, status, seconds)
      reference.observe({ method, route, status: String(status) }, seconds)
    }
    const rendered = await ours.metrics()
    assert.deepEqual(canonicalLines(rendered), canonicalLines(await theirs.metrics()))
    assert.match(rendered, /# TYPE tracewell_http_request_duration_seconds histogram/)
    assert.match(rendered, /tracewell_http_request_duration_seconds_count\{method="GET",route="\/api\/promptset",status="200"\} 3/)
  })

  it('starts from nothing again when the registry is reset', async () => {
    const registry = new Registry()
    const histogram = new RequestDurationHistogram({ upperBounds, registry })
    histogram.observe('GET', '/healthz', 200, 0.002)
    registry.resetMetrics()
    assert.doesNotMatch(await registry.metrics(), /_count/)
    histogram.observe('GET', '/healthz', 200, 0.002)
    assert.match(await registry.metrics(), /tracewell_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} 1/)
  })
})
