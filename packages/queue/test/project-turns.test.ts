import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { loadConfig, TestEnvironmentSchema } from '@tracewell/config'
import { Redis } from 'ioredis'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { addTurns, endTurn, isLightTurn, lightTurns, maxJobPriority, priorityOfTurn, projectTurnsKeyOf } from '../src/index.ts'

const { REDIS_URL } = loadConfig(TestEnvironmentSchema)

describe('project turns', { timeout: 30_000 }, () => {
  const redis = new Redis(REDIS_URL)
  const prefix = testQueuePrefix('turns')
  after(async () => {
    await redis.del(projectTurnsKeyOf(prefix, 'a'), projectTurnsKeyOf(prefix, 'b'))
    redis.disconnect()
  })

  it('numbers each project’s new jobs after its unfinished ones, and forgets a project whose jobs are all done', async () => {
    assert.deepEqual(await addTurns(redis, prefix, new Map([['a', 3], ['b', 1]])), new Map([['a', [1, 2, 3]], ['b', [1]]]))
    assert.deepEqual(await addTurns(redis, prefix, new Map([['a', 1]])), new Map([['a', [4]]]))
    await endTurn(redis, prefix, 'b')
    assert.equal(await redis.exists(projectTurnsKeyOf(prefix, 'b')), 0)
    // Ended more often than counted (a drifted counter): never below zero.
    await endTurn(redis, prefix, 'b')
    assert.deepEqual(await addTurns(redis, prefix, new Map([['b', 1]])), new Map([['b', [1]]]))
    const ttl = await redis.pttl(projectTurnsKeyOf(prefix, 'a'))
    assert.ok(ttl > 0 && ttl <= 10 * 60_000, 'an idle counter expires')
  })

  it('maps turns to BullMQ priorities: none for the first, n − 1 after, capped at BullMQ’s largest', () => {
    assert.deepEqual([1, 2, 3, maxJobPriority + 5].map(priorityOfTurn), [undefined, 1, 2, maxJobPriority])
    assert.deepEqual([undefined, 0, 1, lightTurns - 1, lightTurns].map(isLightTurn), [true, true, true, true, false])
  })
})
