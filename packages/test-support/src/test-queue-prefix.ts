import { randomUUID } from 'node:crypto'
import { after } from 'node:test'
import { Redis } from 'ioredis'

// Every test's own queue prefix, removed from the test Redis when its file's tests are done: a full
// run used to leave about 4,200 keys behind, 886 of them without expiry (docs/benchmarks.md).
//
// The hook is registered when this module is first imported, at the top of a test file, so it runs
// once after every test of the file. node:test's after() called from a before() hook would run at
// once, and from a test body after that test only, too early for a prefix a suite shares.
// A separate entry point (@tracewell/test-support/queue-prefix): importing node:test from a
// benchmark would start a test run in it.

const prefixes = new Set<string>()

// TEST_REDIS_URL as testEnvironment() of @tracewell/config reads it: test-support cannot depend on
// config, whose own dependencies' tests depend on test-support (a workspace circle turbo refuses).
// eslint-disable-next-line no-restricted-properties -- see above
const testRedisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

after(async () => {
  await removeTestQueuePrefixes()
})

/** A fresh queue prefix (QUEUE_PREFIX), `test-<label>-<uuid>`, whose keys are removed after the file's tests. */
export function testQueuePrefix(label = 'queue'): string {
  const prefix = `test-${label}-${randomUUID()}`
  prefixes.add(prefix)
  return prefix
}

/**
 * Removes every key under the prefixes handed out so far from the test Redis (TEST_REDIS_URL);
 * how many it removed. A test whose Redis was its own (a fault test's) finds nothing here.
 */
export async function removeTestQueuePrefixes(redisUrl = testRedisUrl): Promise<number> {
  if (prefixes.size === 0) return 0
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true })
  let removed = 0
  try {
    await redis.connect()
    for (const prefix of prefixes) {
      let cursor = '0'
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
        cursor = next
        if (keys.length > 0) removed += await redis.unlink(...keys)
      } while (cursor !== '0')
    }
    prefixes.clear()
  } finally {
    redis.disconnect()
  }
  return removed
}
