import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Span } from '../src/api/types.ts'
import { buildWaterfall, visibleRows } from '../src/lib/span-tree.ts'

const t0 = 1_767_225_600_000_000_000n // 2026-01-01T00:00:00Z in ns

function span(spanId: string, parentSpanId: string | null, startMs: number, durationMs: number, statusCode = 0): Span {
  const start = t0 + BigInt(startMs) * 1_000_000n
  const end = start + BigInt(durationMs) * 1_000_000n
  return {
    traceId: 'a'.repeat(32), spanId, parentSpanId, name: `op-${spanId}`, kind: 1,
    startTime: '', endTime: '', startTimeUnixNano: String(start), endTimeUnixNano: String(end), durationNs: String(end - start),
    traceState: null, status: { code: statusCode, message: null }, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmResponseModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    cachedInputTokens: null, cacheWriteInputTokens: null, reasoningTokens: null, tokensEstimated: false, sessionId: null, userId: null,
    inputCostUsd: null, outputCostUsd: null, totalCostUsd: null, costSource: null,
    attributes: {}, resourceAttributes: {}, events: [], links: [], receivedAt: '',
  }
}

describe('buildWaterfall', () => {
  it('orders spans depth first, children by start, with bars on one time axis', () => {
    const waterfall = buildWaterfall([span('c', 'a', 50, 50), span('a', null, 0, 100), span('b', 'a', 10, 20, 2), span('d', 'b', 15, 5)])
    assert.deepEqual(waterfall.rows.map((row) => [row.span.spanId, row.depth, row.childCount]), [['a', 0, 2], ['b', 1, 1], ['d', 2, 0], ['c', 1, 0]])
    assert.equal(waterfall.totalMicros, 100_000)
    const c = waterfall.rows[3]!
    assert.deepEqual([c.offset, c.width, c.startMicros, c.durationMicros], [0.5, 0.5, 50_000, 50_000])
    assert.deepEqual(waterfall.rows.map((row) => row.isError), [false, true, false, false])
  })

  it('shows spans whose parent is missing as roots, and survives a cycle of parent ids', () => {
    const waterfall = buildWaterfall([span('x', 'missing', 5, 1), span('p', 'q', 0, 1), span('q', 'p', 1, 1)])
    assert.deepEqual(waterfall.rows.map((row) => row.span.spanId).sort(), ['p', 'q', 'x'])
    assert.equal(waterfall.rows[0]?.span.spanId, 'x')
  })

  it('builds a trace 5,000 spans deep without recursion (its time is measured by bench:console)', () => {
    const spans = [span('s0', null, 0, 5000)]
    for (let i = 1; i < 5000; i++) spans.push(span(`s${i}`, `s${i - 1}`, i, 1))
    const waterfall = buildWaterfall(spans)
    assert.equal(waterfall.rows.length, 5000)
    assert.equal(waterfall.rows[4999]?.depth, 4999)
    assert.equal(waterfall.rows[4999]?.span.spanId, 's4999')
  })
})

describe('visibleRows', () => {
  it('folds away the subtrees of collapsed spans', () => {
    const { rows } = buildWaterfall([span('a', null, 0, 100), span('b', 'a', 10, 20), span('d', 'b', 15, 5), span('c', 'a', 50, 50)])
    assert.deepEqual(visibleRows(rows, new Set(['b'])).map((row) => row.span.spanId), ['a', 'b', 'c'])
    assert.deepEqual(visibleRows(rows, new Set(['a'])).map((row) => row.span.spanId), ['a'])
    assert.deepEqual(visibleRows(rows, new Set(['d'])).map((row) => row.span.spanId), ['a', 'b', 'd', 'c'])
  })
})
