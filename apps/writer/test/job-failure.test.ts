import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { UnrecoverableError } from 'bullmq'
import { jobFailure } from '../src/span-batch.processor.ts'

// Which database errors send a job to the failed set at once, and which are retried.
describe('jobFailure', { timeout: 10_000 }, () => {
  it('fails a job the database refuses for its data at once', () => {
    for (const code of ['22P02', '23505', '23502']) assert.ok(jobFailure(Object.assign(new Error('refused'), { code })) instanceof UnrecoverableError, code)
  })

  it('retries a span that met the default partition while its day was being attached (23514), and any outage', () => {
    for (const code of ['23514', '57P01', '08006']) {
      const error = Object.assign(new Error('not this time'), { code })
      assert.equal(jobFailure(error), error, code)
    }
  })
})
