import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createInProcessSpanBatchProducer, QueueBacklogFullError, QueueUnavailableError, type ProjectSpans } from '../src/index.ts'
import { enqueueSpans, makeSpans } from './helpers.ts'

const spanIdsOf = (groups: ProjectSpans[][]) => groups.flatMap((group) => group.flatMap((batch) => batch.spans.map((span) => span.spanId)))

describe('in-process span-batch producer', () => {
  test('groups concurrent requests and answers each only after process() stored its spans', async () => {
    const processed: ProjectSpans[][] = []
    const producer = createInProcessSpanBatchProducer({
      maxSpansPerJob: 20,
      maxBacklogSpans: 10_000,
      process: async (batches) => {
        await new Promise((resolve) => setTimeout(resolve, 5))
        processed.push(batches)
      },
    })
    const requests = Array.from({ length: 30 }, (_, i) => ({ projectId: `project-${i % 2}`, spans: makeSpans(3) }))
    const answeredAfterStore = await Promise.all(
      requests.map(async (request) => {
        await enqueueSpans(producer, request.projectId, request.spans)
        const stored = new Set(spanIdsOf(processed))
        return request.spans.every((span) => stored.has(span.spanId))
      }),
    )
    assert.ok(answeredAfterStore.every(Boolean))
    assert.equal(processed.length, 5) // 90 spans in jobs of at most 20
    assert.equal(spanIdsOf(processed).length, 90)
    for (const group of processed) assert.ok(group.reduce((sum, batch) => sum + batch.spans.length, 0) <= 20)
    assert.equal(producer.backlog(), 0)
    await producer.close()
  })

  test('retries a failing process() and rejects every caller with QueueUnavailableError when it keeps failing', async () => {
    let calls = 0
    const producer = createInProcessSpanBatchProducer({
      maxSpansPerJob: 100,
      maxBacklogSpans: 10_000,
      attempts: 3,
      retryDelayMs: 5,
      process: async () => {
        calls++
        throw new Error('connection refused')
      },
    })
    const outcomes = await Promise.allSettled([enqueueSpans(producer, 'p', makeSpans(2)), enqueueSpans(producer, 'p', makeSpans(2))])
    assert.equal(calls, 3)
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected')
      assert.ok(outcome.reason instanceof QueueUnavailableError)
      assert.match(outcome.reason.message, /connection refused/)
    }
    await producer.close()
  })

  test('succeeds when process() recovers within its retries', async () => {
    let calls = 0
    const producer = createInProcessSpanBatchProducer({
      maxSpansPerJob: 100,
      maxBacklogSpans: 10_000,
      retryDelayMs: 5,
      process: async () => {
        if (++calls < 3) throw new Error('database restarting')
      },
    })
    await enqueueSpans(producer, 'p', makeSpans(2))
    assert.equal(calls, 3)
    await producer.close()
  })

  test('refuses work above the in-memory backlog bound, and close() flushes what is pending', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const stored: ProjectSpans[][] = []
    const producer = createInProcessSpanBatchProducer({
      maxSpansPerJob: 100,
      maxBacklogSpans: 10,
      process: async (batches) => {
        await gate
        stored.push(batches)
      },
    })
    const first = enqueueSpans(producer, 'p', makeSpans(6))
    const second = enqueueSpans(producer, 'p', makeSpans(6))
    assert.equal(producer.backlog(), 12)
    await assert.rejects(enqueueSpans(producer, 'p', makeSpans(1)), QueueBacklogFullError)
    const closing = producer.close()
    await assert.rejects(enqueueSpans(producer, 'p', makeSpans(1)), QueueUnavailableError)
    release()
    await closing
    await Promise.all([first, second])
    assert.equal(spanIdsOf(stored).length, 12)
  })
})
