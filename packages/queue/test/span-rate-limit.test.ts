import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { loadConfig, TestEnvironmentSchema } from '@tracewell/config'
import { Redis } from 'ioredis'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { createMemorySpanRateLimiter, createRedisSpanRateLimiter, spanRateLimitKeyOf } from '../src/index.ts'

const { REDIS_URL } = loadConfig(TestEnvironmentSchema)
const limit = { spansPerSecond: 10, burst: 20 }

describe('span token buckets', { timeout: 30_000 }, () => {
  it('in memory: takes the burst, refills at the rate, reports what the headers say', async () => {
    let now = 1_000_000
    const buckets = createMemorySpanRateLimiter(() => now)
    assert.deepEqual(await buckets.take('p', 15, limit), { allowed: true, limit: 20, remaining: 5, resetSeconds: 2, retryAfterSeconds: 0, emptySeconds: 0 })
    assert.deepEqual(await buckets.take('p', 10, limit), { allowed: false, limit: 20, remaining: 5, resetSeconds: 2, retryAfterSeconds: 1, emptySeconds: 0 })
    now += 500 // 5 spans back
    assert.deepEqual(await buckets.take('p', 10, limit), { allowed: true, limit: 20, remaining: 0, resetSeconds: 2, retryAfterSeconds: 0, emptySeconds: 0.1 })
    // Larger than the bucket: refused until the bucket is full, then taken into debt.
    assert.equal((await buckets.take('p', 50, limit)).retryAfterSeconds, 2)
    now += 2_000
    const debt = await buckets.take('p', 50, limit)
    assert.equal(debt.allowed, true)
    assert.equal(debt.resetSeconds, 5, '30 spans of debt and 20 to fill, at 10 a second')
    assert.equal((await buckets.take('q', 1, limit)).remaining, 19, 'projects have buckets of their own')
  })

  describe('in Redis', () => {
    const prefix = testQueuePrefix('rate')
    const redis = new Redis(REDIS_URL)
    const buckets = createRedisSpanRateLimiter({ redis: REDIS_URL, prefix, shards: 1 })
    after(async () => {
      await buckets.close()
      redis.disconnect()
    })

    it('is one atomic bucket per project, whoever asks, refilled by Redis’s clock', async () => {
      const other = createRedisSpanRateLimiter({ redis: REDIS_URL, prefix, shards: 1 })
      try {
        // 30 concurrent takes of 1 span from two limiters: exactly the burst is let through.
        const verdicts = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? buckets : other).take('p', 1, { spansPerSecond: 1, burst: 20 })))
        assert.equal(verdicts.filter((verdict) => verdict.allowed).length, 20)
        const refused = verdicts.find((verdict) => !verdict.allowed)
        assert.deepEqual(refused && { ...refused, resetSeconds: undefined, emptySeconds: undefined }, { allowed: false, limit: 20, remaining: 0, resetSeconds: undefined, retryAfterSeconds: 1, emptySeconds: undefined })
        assert.ok(refused && refused.emptySeconds > 0 && refused.emptySeconds <= 1, 'empty for up to a second at 1 span a second')
      } finally {
        await other.close()
      }
      // At 1000 spans a second the bucket is full again within 50 ms, and its key then expires.
      const fast = { spansPerSecond: 1_000, burst: 20 }
      assert.equal((await buckets.take('fast', 20, fast)).allowed, true)
      assert.equal((await buckets.take('fast', 20, fast)).allowed, false)
      await sleep(50)
      assert.equal((await buckets.take('fast', 20, fast)).allowed, true)
      const ttl = await redis.pttl(spanRateLimitKeyOf(prefix, 'fast'))
      assert.ok(ttl > 0 && ttl <= 1_020, `expires once full again (${ttl} ms)`)
    })
  })
})
