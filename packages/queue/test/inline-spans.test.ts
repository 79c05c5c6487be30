import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { spanCountOf, spansOfBatch, type InlineSpanBatchJob } from '../src/index.ts'
import { makeSpan } from './helpers.ts'

const withKey = (key: string) => ({ [key]: { stringValue: 'v' } })

// Version 1 jobs written by the previous producer: spans with escaped attribute keys travel as
// JSON text in `spansJson`, beside the others.
describe('inline (version 1) span batches', () => {
  it('give back the spans of spansJson after the others, whole, through JSON as Redis stores them', () => {
    const plain = makeSpan()
    const escaped = [makeSpan({ attributes: withKey('k\\') }), makeSpan({ attributes: withKey('k\t') }), makeSpan({ attributes: withKey('k"') })]
    const job: InlineSpanBatchJob = { version: 1, batches: [{ projectId: 'p', spans: [plain], spansJson: JSON.stringify(escaped) }, { projectId: 'q', spans: [plain] }] }
    const [first, second] = (JSON.parse(JSON.stringify(job)) as InlineSpanBatchJob).batches
    assert.deepStrictEqual(spansOfBatch(first!), [plain, ...escaped])
    assert.deepStrictEqual(spansOfBatch(second!), [plain])
    assert.equal(spanCountOf(job), 5, 'spanCountOf counts the spans of spansJson too')
  })

  it('refuse a corrupt spansJson, saying what is wrong', () => {
    assert.throws(() => spansOfBatch({ projectId: 'p', spans: [], spansJson: '[{' }), /^SyntaxError: spansJson is not valid JSON: /)
    assert.throws(() => spansOfBatch({ projectId: 'p', spans: [], spansJson: '{}' }), /spansJson is not a JSON array/)
    assert.throws(() => spansOfBatch({ projectId: 'p', spans: [], spansJson: '[{"traceId":"a"}]' }), /spansJson\/0 is not a span/)
  })
})
