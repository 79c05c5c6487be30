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
