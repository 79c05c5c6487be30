import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { encodeForRedis, spanHasKeyNeedingEscape, spansOfBatch, type SpanBatchJob } from '../src/index.ts'
import { makeSpan } from './helpers.ts'

const withKey = (key: string) => ({ [key]: { stringValue: 'v' } })

describe('spans with attribute keys that JSON escapes', () => {
  it('are found in attributes, resource attributes, events and links', () => {
    assert.equal(spanHasKeyNeedingEscape(makeSpan()), false)
    assert.equal(spanHasKeyNeedingEscape(makeSpan({ attributes: withKey('tab\there') })), true)
    assert.equal(spanHasKeyNeedingEscape(makeSpan({ resourceAttributes: withKey('back\\slash') })), true)
    assert.equal(spanHasKeyNeedingEscape(makeSpan({ events: [{ timeUnixNano: '1', name: 'e', attributes: withKey('quote"') }] })), true)
    const link = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceState: null, attributes: withKey('\u0001') }
    assert.equal(spanHasKeyNeedingEscape(makeSpan({ links: [link] })), true)
    assert.equal(spanHasKeyNeedingEscape(makeSpan({ attributes: withKey('é 😀 /') })), false)
  })

  it('travel as JSON text beside the others and come back whole, through JSON as Redis stores them', () => {
    const plain = makeSpan()
    const escaped = [makeSpan({ attributes: withKey('k\\') }), makeSpan({ attributes: withKey('k\t') }), makeSpan({ attributes: withKey('k"') })]
    const job: SpanBatchJob = { version: 1, batches: [{ projectId: 'p', spans: [escaped[0]!, plain, escaped[1]!, escaped[2]!] }, { projectId: 'q', spans: [plain] }] }
    const encoded = encodeForRedis(job)
    assert.deepEqual(encoded.batches[0]?.spans, [plain])
    assert.equal(typeof encoded.batches[0]?.spansJson, 'string')
    assert.equal(encoded.batches[1], job.batches[1], 'a batch without such keys is passed on as it is')

    const [first, second] = (JSON.parse(JSON.stringify(encoded)) as SpanBatchJob).batches
    assert.deepStrictEqual(spansOfBatch(first!), [plain, ...escaped])
    assert.deepStrictEqual(spansOfBatch(second!), [plain])
  })

  it('leave a job without them untouched', () => {
    const job: SpanBatchJob = { version: 1, batches: [{ projectId: 'p', spans: [makeSpan()] }] }
    assert.equal(encodeForRedis(job), job)
  })

  it('refuse a corrupt spansJson, saying what is wrong', () => {
    assert.throws(() => spansOfBatch({ projectId: 'p', spans: [], spansJson: '[{' }), /^SyntaxError: spansJson is not valid JSON: /)
    assert.throws(() => spansOfBatch({ projectId: 'p', spans: [], spansJson: '{}' }), /spansJson is not a JSON array/)
    assert.throws(() => spansOfBatch({ projectId: 'p', spans: [], spansJson: '[{"traceId":"a"}]' }), /spansJson\/0 is not a span/)
  })
})
