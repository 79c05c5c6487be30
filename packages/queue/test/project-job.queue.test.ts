import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { loadConfig, TestEnvironmentSchema } from '@tracewell/config'
import { Queue } from 'bullmq'
import { freePort } from '@tracewell/test-support'
import { Redis } from 'ioredis'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import {
  createBullMqProjectJobQueue,
  createInProcessProjectJobQueue,
  projectTurnsKeyOf,
  type ProjectJobProcessor,
  type ProjectJobQueue,
  type ProjectJobQueueOptions,
} from '../src/index.ts'
import { OwnRedis } from './helpers.ts'

const { REDIS_URL } = loadConfig(TestEnvironmentSchema)
const logger = { info() {}, warn() {}, error() {} }

class Permanent extends Error {}

type Variant = { name: string; make: (options: ProjectJobQueueOptions) => { queue: ProjectJobQueue; prefix: string } }
const prefixes: string[] = []
const variants: Variant[] = [
  {
    name: 'BullMQ',
    make: (options) => {
      const prefix = testQueuePrefix('jobs')
      prefixes.push(prefix)
      return { queue: createBullMqProjectJobQueue({ ...options, redis: REDIS_URL, prefix }), prefix }
    },
  },
  { name: 'in-process', make: (options) => ({ queue: createInProcessProjectJobQueue(options), prefix: '' }) },
]

after(async () => {
  const redis = new Redis(REDIS_URL)
  for (const prefix of prefixes) {
    const keys = await redis.keys(`${prefix}:*`)
    if (keys.length > 0) await redis.del(...keys)
  }
  redis.disconnect()
})

const until = async (done: () => boolean, ms: number) => {
  for (const deadline = Date.now() + ms; !done() && Date.now() < deadline; ) await sleep(20)
}

for (const variant of variants) {
  describe(`a project job queue (${variant.name})`, { timeout: 60_000 }, () => {
    it('shares its slots between projects: one project’s later job comes in after one call, not after another’s backlog', async () => {
      // Every slot held by project A's backlog of 12 calls of 800 ms (4 rounds of 3); B's one job,
      // added once A's first calls run, takes the first slot to free up.
      const callMs = 800
      const finished: Array<{ jobId: string; at: number }> = []
      const started = new Map<string, number>()
      const process: ProjectJobProcessor = async (jobId) => {
        started.set(jobId, Date.now())
        await sleep(callMs)
        finished.push({ jobId, at: Date.now() })
      }
      const { queue } = variant.make({ name: 'evaluations', jobKind: 'judgment', concurrency: 3, maxAttempts: 1, backoffMs: 10, process, logger })
      try {
        const backlog = Array.from({ length: 12 }, (_, i) => ({ jobId: `a-${i}-${randomUUID()}`, projectId: 'project-a' }))
        await queue.add(backlog)
        await until(() => started.size >= 3, 10_000)
        const addedAt = Date.now()
        const late = { jobId: `b-${randomUUID()}`, projectId: 'project-b' }
        await queue.add([late])
        await until(() => finished.length >= 13, 30_000)
        const order = finished.map(({ jobId }) => jobId)
        const bAt = (finished.find(({ jobId }) => jobId === late.jobId)?.at ?? Infinity) - addedAt
        // Unfair, B would wait for all of A's 4 rounds; fair, for the first slot to free (≤ one call) plus its own call.
        assert.ok(bAt < callMs * 2 + 600, `project B's job took ${bAt} ms after it was added`)
        assert.ok(order.indexOf(late.jobId) <= 6, `B's job finished ${order.indexOf(late.jobId) + 1}th of 13: ${order.join(' ')}`)
      } finally {
        await queue.close()
      }
    })

    it('runs a job once however often it is added, and at most `concurrency` at once', async () => {
      let running = 0
      let most = 0
      const runs = new Map<string, number>()
      const { queue } = variant.make({
        name: 'experiment-items',
        jobKind: 'experiment item',
        concurrency: 2,
        maxAttempts: 1,
        backoffMs: 10,
        logger,
        process: async (jobId) => {
          runs.set(jobId, (runs.get(jobId) ?? 0) + 1)
          most = Math.max(most, ++running)
          await sleep(50)
          running--
        },
      })
      try {
        const jobs = ['a', 'b', 'c', 'd', 'e'].map((letter) => ({ jobId: `${letter}-${randomUUID()}`, projectId: letter < 'c' ? 'p1' : 'p2' }))
        await queue.add(jobs)
        await queue.add(jobs.slice(0, 3))
        await until(() => runs.size === 5, 10_000)
        await sleep(150)
        assert.deepEqual([...runs.values()], [1, 1, 1, 1, 1])
        assert.equal(most, 2)
      } finally {
        await queue.close()
      }
    })

    it('retries with doubling backoff until the last attempt; a permanent error stops at once', async () => {
      const calls: Array<{ jobId: string; final: boolean; at: number }> = []
      const begun = Date.now()
      const flaky = `flaky-${randomUUID()}`
      const fatal = `fatal-${randomUUID()}`
      const { queue } = variant.make({
        name: 'evaluations',
        jobKind: 'judgment',
        concurrency: 1,
        maxAttempts: 3,
        backoffMs: 100,
        logger,
        isPermanent: (error) => error instanceof Permanent || (error as Error).message === 'fatal',
        process: async (jobId, final) => {
          calls.push({ jobId, final, at: Date.now() - begun })
          throw jobId === fatal ? new Permanent('fatal') : new Error('down')
        },
      })
      try {
        await queue.add([{ jobId: flaky, projectId: 'p' }, { jobId: fatal, projectId: 'q' }])
        await until(() => calls.filter((call) => call.jobId === flaky).length >= 3, 10_000)
        await sleep(300)
        assert.deepEqual(calls.filter((call) => call.jobId === fatal).map((call) => call.final), [false], 'a permanent error is not retried')
        const flakyCalls = calls.filter((call) => call.jobId === flaky)
        assert.deepEqual(flakyCalls.map((call) => call.final), [false, false, true])
        const [first, second, third] = flakyCalls.map((call) => call.at) as [number, number, number]
        assert.ok(second - first >= 90 && third - second >= 190, `retried after ${second - first} and ${third - second} ms`)
      } finally {
        await queue.close()
      }
    })
  })
}

describe('a BullMQ project job queue across releases', { timeout: 30_000 }, () => {
  it('runs a job queued by the release before project ids, with only its jobId, and ends its projects’ turns', async () => {
    const prefix = testQueuePrefix('jobs')
    prefixes.push(prefix)
    const ran: string[] = []
    const old = new Queue('evaluations', { connection: { url: REDIS_URL }, prefix })
    const oldId = randomUUID()
    await old.add('judgment', { jobId: oldId }, { jobId: oldId })
    await old.close()
    const queue = createBullMqProjectJobQueue({
      name: 'evaluations',
      jobKind: 'judgment',
      concurrency: 2,
      maxAttempts: 1,
      backoffMs: 10,
      logger,
      redis: REDIS_URL,
      prefix,
      process: async (jobId) => void ran.push(jobId),
    })
    const redis = new Redis(REDIS_URL)
    try {
      const fresh = randomUUID()
      await queue.add([{ jobId: fresh, projectId: 'project-new' }])
      await until(() => ran.length >= 2, 10_000)
      assert.deepEqual(ran.toSorted(), [oldId, fresh].toSorted())
      // The new job's turn was counted and ended: its project's counter is gone.
      await until(() => false, 200)
      assert.equal(await redis.exists(projectTurnsKeyOf(prefix, 'project-new', 'evaluations')), 0)
    } finally {
      await queue.close()
      redis.disconnect()
    }
  })
})

describe('a BullMQ project job queue’s turns', { timeout: 30_000 }, () => {
  it('puts each project’s first job on the wait list and its later ones by turn, counting a job once however often it is added', async () => {
    const prefix = testQueuePrefix('jobs')
    prefixes.push(prefix)
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const queue = createBullMqProjectJobQueue({
      name: 'evaluations', jobKind: 'judgment', concurrency: 1, maxAttempts: 1, backoffMs: 10, logger, redis: REDIS_URL, prefix,
      process: () => gate,
    })
    const inspect = new Queue('evaluations', { connection: { url: REDIS_URL }, prefix })
    const redis = new Redis(REDIS_URL)
    try {
      // More than one chunk of adds (500): the counter carries on across them.
      const flood = Array.from({ length: 1_200 }, (_, i) => ({ jobId: `a-${i}`, projectId: 'flood' }))
      await queue.add(flood)
      await queue.add([{ jobId: 'b-0', projectId: 'quiet' }])
      await queue.add(flood.slice(0, 600))
      assert.equal(await redis.get(projectTurnsKeyOf(prefix, 'flood', 'evaluations')), '1200')
      for (const deadline = Date.now() + 5_000; (await inspect.getActiveCount()) === 0 && Date.now() < deadline; ) await sleep(20)
      assert.deepEqual(await inspect.getJobCounts('active', 'wait', 'prioritized'), { active: 1, wait: 1, prioritized: 1_199 })
      assert.deepEqual((await inspect.getWaiting()).map((job) => job.id), ['b-0'])
      const [last] = await inspect.getJobs(['prioritized'], 1_198, 1_198, true)
      assert.deepEqual([last?.id, last?.opts.priority], ['a-1199', 1_199])
    } finally {
      release()
      await queue.close()
      await inspect.close()
      redis.disconnect()
    }
  })
})

describe('a BullMQ project job queue through a Redis outage', { timeout: 60_000 }, () => {
  let redis: OwnRedis | undefined
  after(() => redis?.kill())

  it('is not ready and refuses jobs at once while Redis is down, then takes and runs them once it is back', async () => {
    redis = new OwnRedis(await freePort())
    await redis.start()
    const ran: string[] = []
    const queue = createBullMqProjectJobQueue({
      name: 'evaluations',
      jobKind: 'judgment',
      concurrency: 2,
      maxAttempts: 1,
      backoffMs: 10,
      logger,
      redis: redis.url,
      prefix: 'outage',
      process: async (jobId) => void ran.push(jobId),
    })
    try {
      await queue.ping()
      await redis.kill()
      await sleep(200)
      const began = Date.now()
      await assert.rejects(queue.add([{ jobId: 'during', projectId: 'p' }]), /not connected/)
      await assert.rejects(queue.ping(), /not connected/)
      assert.ok(Date.now() - began < 500, `refused after ${Date.now() - began} ms`)
      await redis.start()
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(100)) {
        if (await queue.ping().then(() => true, () => false)) break
      }
      await queue.add([{ jobId: 'after', projectId: 'p' }])
      await until(() => ran.length > 0, 10_000)
      assert.deepEqual(ran, ['after'])
    } finally {
      await queue.close()
    }
  })
})
