import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { EvaluatorConfigSchema, loadConfig, TestEnvironmentSchema, type EvaluatorConfig } from '@tracewell/config'
import { findExperiment, listJudgments, listExperimentResults, type JudgmentDto } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { metricsPlugin } from '@tracewell/http'
import { dbPlugin } from '@tracewell/service'
import { createOutbound, outboundOptionsOf } from '@tracewell/outbound'
import { createSpanBatchQueueConnection } from '@tracewell/queue'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import Fastify from 'fastify'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { buildApp, evaluatorOptionsFromSettings, evaluatorPlugin } from '../src/index.ts'
import { connectedProject, judgedProject, promptExperiment, span, startSlowJudge } from './support/judge-fixtures.ts'

// Issue 48 §4: evaluator slots are shared between projects. Project A's 10 judgments against a
// judge that takes JUDGE_MS each hold both slots (EVALUATOR_CONCURRENCY=2) for 5 rounds; project
// B's one judgment, found after A's are running, must finish within about one of A's calls, not
// after A's backlog. Over the BullMQ queue (the evaluator service) and the in-process one (`npm
// start` without Redis), with a real HTTP judge on this machine.

const JUDGE_MS = 2_000
const keyHex = randomBytes(32).toString('hex')

/** The evaluator's settings for both variants; the in-process one leaves Redis out. */
function settingsOf(databaseUrl: string): EvaluatorConfig {
  const { REDIS_URL } = loadConfig(TestEnvironmentSchema)
  return loadConfig(EvaluatorConfigSchema, {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    QUEUE_PREFIX: testQueuePrefix(),
    LOG_LEVEL: 'silent',
    LLM_CONNECTION_ENCRYPTION_KEY: keyHex,
    EVALUATOR_CONCURRENCY: '2',
    EXPERIMENT_CONCURRENCY: '2',
    EVALUATOR_POLL_INTERVAL_MS: '100',
    EVALUATOR_TRACE_QUIET_MS: '0',
    EVALUATOR_MAX_ATTEMPTS: '1',
    // The slow judge listens on loopback, which the outbound policy refuses unless allowed.
    OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32',
  })
}

type Build = (database: TestDatabase, config: EvaluatorConfig) => Promise<{ close(): Promise<void> }>

const variants: Array<{ name: string; build: Build }> = [
  {
    name: 'the evaluator service (BullMQ)',
    build: async (database, config) => {
      const app = await buildApp(config, { db: database.db })
      await app.ready()
      return {
        async close() {
          await app.close()
          // The queues' keys go with the test (BullMQ's meta keys would otherwise stay for good).
          const redis = createSpanBatchQueueConnection(config.REDIS_URL as string, 'worker')
          const keys = await redis.keys(`${config.QUEUE_PREFIX}:*`)
          if (keys.length > 0) await redis.del(...keys)
          redis.disconnect()
        },
      }
    },
  },
  {
    name: '`npm start` without Redis (in process)',
    build: async (database, config) => {
      const app = Fastify()
      await app.register(dbPlugin, { db: database.db, closeOnShutdown: false })
      await app.register(metricsPlugin)
      const outbound = createOutbound(outboundOptionsOf(config))
      app.addHook('onClose', () => outbound.close())
      await app.register(evaluatorPlugin, evaluatorOptionsFromSettings(config, undefined, keyHex, outbound))
      await app.ready()
      return app
    },
  },
]

for (const variant of variants) {
  describe(`fair judging: ${variant.name}`, { timeout: 120_000 }, () => {
    let database: TestDatabase
    let judge: Awaited<ReturnType<typeof startSlowJudge>>
    let app: { close(): Promise<void> }

    before(async () => {
      judge = await startSlowJudge(JUDGE_MS)
      database = await createTestDatabase()
      app = await variant.build(database, settingsOf(database.url))
    })
    after(async () => {
      await app?.close()
      await database?.drop()
      judge?.server.close()
    })

    it("judges another project's trace within about one judge call while one project's backlog fills every slot, each trace once", async () => {
      const db = database.db
      const a = await judgedProject(db, keyHex, judge.url, 'busy')
      const b = await judgedProject(db, keyHex, judge.url, 'quiet')
      const jobsOf = async (project: { projectId: string; evaluatorId: string }): Promise<JudgmentDto[]> =>
        (await listJudgments(db, { projectId: project.projectId, evaluatorId: project.evaluatorId, limit: 100 })).jobs

      await storeSpans(db, Array.from({ length: 10 }, (_, i) => span(a.projectId, `ANSWER-a-${i}`)))
      await summariseAll(db)
      for (const deadline = Date.now() + 15_000; judge.inFlight() < 2 && Date.now() < deadline; ) await sleep(20)
      assert.equal(judge.inFlight(), 2, "A's judgments hold both slots")

      const addedAt = Date.now()
      await storeSpans(db, [span(b.projectId, 'ANSWER-b-0')])
      await summariseAll(db)
      let bJob: JudgmentDto | undefined
      for (const deadline = Date.now() + 30_000; bJob?.status !== 'completed' && Date.now() < deadline; await sleep(50)) [bJob] = await jobsOf(b)
      const tookMs = Date.now() - addedAt
      const aDoneThen = (await jobsOf(a)).filter((job) => job.status === 'completed').length
      assert.equal(bJob?.status, 'completed')
      // Fair: a slot frees within one call, then B's own call (plus a poll and a summary).
      // Unfair: B's judgment would wait for all 5 of A's rounds, about 10 s.
      assert.ok(tookMs < JUDGE_MS * 2 + 2_500, `B's judgment took ${tookMs} ms`)
      assert.ok(aDoneThen <= 6, `${aDoneThen} of A's 10 judgments were done before B's one`)

      // A's backlog still completes, and every trace was sent to the judge once.
      for (const deadline = Date.now() + 30_000; (await jobsOf(a)).some((job) => job.status !== 'completed') && Date.now() < deadline; ) await sleep(200)
      assert.deepEqual((await jobsOf(a)).map((job) => [job.status, job.attempts]), Array.from({ length: 10 }, () => ['completed', 1]))
      assert.deepEqual(judge.asked.toSorted(), [...Array.from({ length: 10 }, (_, i) => `ANSWER-a-${i}`), 'ANSWER-b-0'].toSorted())
    })

    it("runs another project's experiment item within about one model call while one project's experiment fills every slot", async () => {
      const db = database.db
      // No evaluators: only the experiments' own model calls reach the server.
      const a = await connectedProject(db, keyHex, judge.url, 'big-experiment')
      const b = await connectedProject(db, keyHex, judge.url, 'small-experiment')
      const asked = judge.asked.length
      const big = await promptExperiment(db, a, Array.from({ length: 10 }, (_, i) => `ANSWER-big-${i}`))
      for (const deadline = Date.now() + 15_000; judge.inFlight() < 2 && Date.now() < deadline; ) await sleep(20)
      assert.equal(judge.inFlight(), 2, "A's items hold both slots")

      const addedAt = Date.now()
      const small = await promptExperiment(db, b, ['ANSWER-small-0'])
      for (const deadline = Date.now() + 30_000; (await findExperiment(db, b.projectId, small.id))?.status !== 'completed' && Date.now() < deadline; ) await sleep(50)
      const tookMs = Date.now() - addedAt
      const bigDoneThen = (await listExperimentResults(db, big.id)).filter((result) => result.status === 'completed').length
      assert.equal((await findExperiment(db, b.projectId, small.id))?.status, 'completed')
      assert.ok(tookMs < JUDGE_MS * 2 + 2_500, `B's experiment took ${tookMs} ms`)
      assert.ok(bigDoneThen <= 6, `${bigDoneThen} of A's 10 items were done before B's one`)

      for (const deadline = Date.now() + 30_000; (await findExperiment(db, a.projectId, big.id))?.status !== 'completed' && Date.now() < deadline; ) await sleep(200)
      assert.deepEqual((await listExperimentResults(db, big.id)).map((result) => [result.status, result.attempts]), Array.from({ length: 10 }, () => ['completed', 1]))
      assert.equal(judge.asked.length - asked, 11, 'each item called once')
    })
  })
}
