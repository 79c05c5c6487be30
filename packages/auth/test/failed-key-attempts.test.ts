import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FailedKeyAttempts } from '../src/index.ts'

describe('FailedKeyAttempts', () => {
  const clock = () => {
    let now = 1_000_000
    return { now: () => now, advance: (ms: number) => void (now += ms) }
  }

  it('answers the free failures at once, then one a second, then 429 past the longest wait', () => {
    const time = clock()
    const attempts = new FailedKeyAttempts({ freeFailures: 3, spacingMs: 1_000, maxWaitMs: 3_000, windowMs: 60_000, now: time.now })
    for (let i = 0; i < 3; i++) assert.deepEqual(attempts.failed('a'), { waitMs: 0 })
    // A burst: each waits a second more than the one before, until the wait would pass 3 s.
    assert.deepEqual([1, 2, 3, 4].map(() => attempts.failed('a')), [{ waitMs: 0 }, { waitMs: 1_000 }, { waitMs: 2_000 }, { waitMs: 3_000 }])
    assert.deepEqual(attempts.failed('a'), { retryAfterSeconds: 4 })
    assert.deepEqual(attempts.failed('b'), { waitMs: 0 }, 'addresses are counted apart')
    time.advance(4_000)
    assert.deepEqual(attempts.failed('a'), { waitMs: 0 }, 'the queue drains at one a second')
    assert.deepEqual(attempts.failed('a'), { waitMs: 1_000 })
  })

  it('forgets an address once its window has passed', () => {
    const time = clock()
    const attempts = new FailedKeyAttempts({ freeFailures: 1, windowMs: 10_000, now: time.now })
    assert.deepEqual(attempts.failed('a'), { waitMs: 0 })
    assert.deepEqual(attempts.failed('a'), { waitMs: 0 })
    assert.deepEqual(attempts.failed('a'), { waitMs: 1_000 })
    time.advance(10_000)
    assert.deepEqual(attempts.failed('a'), { waitMs: 0 })
  })

  it('keeps at most maxAddresses, dropping the oldest', () => {
    const attempts = new FailedKeyAttempts({ freeFailures: 1, maxAddresses: 2 })
    for (const address of ['a', 'a', 'b', 'c']) attempts.failed(address)
    assert.deepEqual(attempts.failed('a'), { waitMs: 0 }, 'a was dropped, so it starts again')
  })
})
