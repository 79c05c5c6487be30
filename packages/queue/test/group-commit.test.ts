import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { GroupCommit, type GroupCommitOptions } from '../src/group-commit.ts'

// Group commit decides how many requests share a queue write, and so how many jobs ingest, Redis
// and the writers handle for the same spans: one-span requests written one by one made jobs of a
// few spans each, every one of them paying its round trips.

/** A group commit of items that are their own span counts, recording each write's items. */
function recording(options: Partial<GroupCommitOptions<number>> = {}) {
  const writes: number[][] = []
  const group = new GroupCommit<number>({
    sizeOf: (spans) => spans,
    maxSpansPerWrite: 1_000,
    async write(items) {
      writes.push(items)
      await sleep(5)
    },
    ...options,
  })
  return { group, writes }
}

describe('GroupCommit', () => {
  test('without a linger, requests of one turn share a write and those arriving during it share the next', async () => {
    const { group, writes } = recording()
    const first = [group.submit(1), group.submit(1)]
    while (writes.length === 0) await new Promise(setImmediate) // the first write is now in flight
    const second = [group.submit(1), group.submit(2)]
    await Promise.all([...first, ...second])
    assert.deepEqual(writes, [[1, 1], [1, 2]])
  })

  test('with a linger, requests arriving apart within it share one write', async () => {
    const { group, writes } = recording({ lingerMs: 300 })
    const started = performance.now()
    const submitted = [group.submit(1)]
    await sleep(20)
    submitted.push(group.submit(1))
    await sleep(20)
    submitted.push(group.submit(1))
    await Promise.all(submitted)
    assert.deepEqual(writes, [[1, 1, 1]])
    // Counted from the first request's arrival: it waited the linger, not much more.
    const waited = performance.now() - started
    assert.ok(waited >= 295 && waited < 2_000, `the write went after ${waited.toFixed(0)} ms`)
  })

  test('a write holding lingerUntilSpans goes at once, lingering no longer', async () => {
    const { group, writes } = recording({ lingerMs: 60_000, lingerUntilSpans: 5 })
    const submitted = [group.submit(2), group.submit(2)]
    await sleep(10)
    assert.deepEqual(writes, [], 'four spans wait for more')
    submitted.push(group.submit(2))
    await Promise.all(submitted)
    assert.deepEqual(writes, [[2, 2, 2]])
  })

  test('a linger ends once no request has arrived for lingerQuietMs', async () => {
    const { group, writes } = recording({ lingerMs: 60_000, lingerQuietMs: 30 })
    const started = performance.now()
    const submitted = [group.submit(1)]
    await sleep(10)
    submitted.push(group.submit(1))
    // Nothing more comes: the write goes about 30 ms after the second request, not after a minute.
    const written = await Promise.race([Promise.all(submitted).then(() => true), sleep(2_000).then(() => false)])
    assert.equal(written, true, 'the burst was still lingering after 2 s')
    assert.deepEqual(writes, [[1, 1]])
    const waited = performance.now() - started
    assert.ok(waited >= 38, `the write went after ${waited.toFixed(0)} ms, before the burst had been quiet for 30 ms`)
  })

  test('a steady stream keeps its linger open until lingerMs', async () => {
    const { group, writes } = recording({ lingerMs: 150, lingerQuietMs: 40 })
    const submitted: Array<Promise<void>> = []
    // A request every 10 ms, for longer than the linger: never 40 ms without one.
    for (let i = 0; i < 25; i++) {
      submitted.push(group.submit(1))
      await sleep(10)
    }
    await Promise.all(submitted)
    const first = writes[0] as number[]
    assert.ok(first.length >= 8, `the first write held ${first.length} requests; the stream should have lingered ~150 ms`)
    assert.ok(first.length < 25, 'the first write went after lingerMs, not after the stream ended')
  })

  test('a failed write rejects its own requests only; the next write goes after its linger', async () => {
    let fail = true
    const group = new GroupCommit<number>({
      sizeOf: (spans) => spans,
      maxSpansPerWrite: 1_000,
      lingerMs: 20,
      async write() {
        if (fail) throw new Error('Redis went away')
      },
    })
    const failed = group.submit(1)
    await assert.rejects(failed, /Redis went away/)
    fail = false
    await group.submit(1)
    await group.flushed()
    assert.equal(group.unacknowledgedSpans, 0)
  })
})
