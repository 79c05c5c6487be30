import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import * as bullmq from 'bullmq'
import { Queue, UnrecoverableError, Worker } from '../src/bullmq-classes.ts'

// The kit takes BullMQ's classes from their own files, not its index (bullmq-classes.ts): they
// must stay the very classes the index exports, or an `instanceof` across the two (a test's
// UnrecoverableError, BullMQ's own checks) would fail. A BullMQ that moves its files fails here.

describe('BullMQ classes from their own modules', () => {
  it('are the classes bullmq’s index exports', () => {
    assert.equal(Queue, bullmq.Queue)
    assert.equal(Worker, bullmq.Worker)
    assert.equal(UnrecoverableError, bullmq.UnrecoverableError)
  })
})
