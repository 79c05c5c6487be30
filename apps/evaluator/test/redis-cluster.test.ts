import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { EvaluatorConfigSchema, loadConfig } from '@tracewell/config'
import { findExperiment, listJudgments, listExperimentResults, listScores } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { OwnRedisCluster } from '@tracewell/test-support'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { buildApp } from '../src/index.ts'
import { judgedProject, promptExperiment, span, startSlowJudge } from './support/judge-fixtures.ts'

// The evaluator on a real Redis Cluster (redis-server --cluster-enabled yes on private ports):
// its two job queues, each in a hash slot of its own, judge a new trace and run an experiment item
// (whose trace is then judged), each once; an evaluator killed mid-judgment leaves the judgment
// to another, which stores it once.

const keyHex = randomBytes(32).toString('hex')

/** The evaluator's settings on `cluster` (the in-test app's, and the spawned server's environment). */
const settingsOf = (cluster: OwnRedisCluster, databaseUrl: string, prefix: string): Record<string, string> => ({
  DATABASE_URL: databaseUrl,
  REDIS_CLUSTER_NODES: cluster.seeds,
  QUEUE_PREFIX: prefix,
  LOG_LEVEL: 'silent',
  LLM_CONNECTION_ENCRYPTION_KEY: keyHex,
  EVALUATOR_POLL_INTERVAL_MS: '100',
  EVALUATOR_TRACE_QUIET_MS: '0',
  // The judge listens on loopback, which the outbound policy refuses unless allowed.
  OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32',
})

describe('the evaluator on a Redis Cluster', { timeout: 120_000 }, () => {
  const cluster = new OwnRedisCluster({ basePort: 7340, masters: 3 })
  let database: TestDatabase
  let judge: Awaited<ReturnType<typeof startSlowJudge>>
  let app: App

  before(async () => {
    await cluster.start()
    judge = await startSlowJudge(50)
    database = await createTestDatabase()
    const config = loadConfig(EvaluatorConfigSchema, settingsOf(cluster, database.url, `cluster-${randomUUID().slice(0, 8)}`))
    app = await buildApp(config, { db: database.db })
    await app.ready()
  })
  after(async () => {
    await app?.close()
    await database?.drop()
    judge?.server.close()
    await cluster.stop()
  })

  it('is ready, judges a new trace and runs an experiment item whose trace it judges, each once', async () => {
    const db = database.db
    for (let deadline = Date.now() + 10_000; ; await sleep(100)) {
      const ready = await app.inject({ url: '/readyz' })
      if (ready.statusCode === 200 || Date.now() > deadline) {
        assert.deepEqual(ready.json(), { status: 'ok', checks: { postgres: 'ok', queue: 'ok' } })
        break
      }
    }
    const project = await judgedProject(db, keyHex, judge.url, 'clustered')
    await storeSpans(db, [span(project.projectId, 'ANSWER-trace')])
    await summariseAll(db)

    const experiment = await promptExperiment(db, project, ['ANSWER-item'], [project.evaluatorId])

    const jobs = async () => (await listJudgments(db, { projectId: project.projectId, evaluatorId: project.evaluatorId, limit: 10 })).jobs
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
      const done = (await findExperiment(db, project.projectId, experiment.id))?.status === 'completed'
      const judged = await jobs()
      if (done && judged.length === 2 && judged.every((job) => job.status === 'completed')) break
    }
    const [result] = await listExperimentResults(db, experiment.id)
    assert.deepEqual([result?.status, result?.attempts], ['completed', 1])
    assert.equal((await findExperiment(db, project.projectId, experiment.id))?.status, 'completed')
    // The new trace's judgment and the experiment trace's, each judged on its first attempt.
    const judged = await jobs()
    assert.deepEqual(judged.map((job) => [job.status, job.attempts]), [['completed', 1], ['completed', 1]])
    assert.ok(judged.some((job) => job.traceId === result?.traceId), "the experiment item's trace was judged")
    // Two judge calls (the trace's, the experiment trace's) and the experiment's own model call.
    assert.equal(judge.asked.length, 3, judge.asked.join(' | '))
  })
})

describe('an evaluator killed mid-judgment on a Redis Cluster', { timeout: 120_000 }, () => {
  const cluster = new OwnRedisCluster({ basePort: 7350, masters: 3 })
  let database: TestDatabase
  let judge: Awaited<ReturnType<typeof startSlowJudge>>
  let child: ChildProcess | undefined
  let survivor: App | undefined

  before(async () => {
    await cluster.start()
    judge = await startSlowJudge(3_000)
    database = await createTestDatabase()
  })
  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await survivor?.close()
    await database?.drop()
    judge?.server.close()
    await cluster.stop()
  })

  it('leaves its judgment to another evaluator within seconds, judged into one score', async () => {
    const db = database.db
    const settings = settingsOf(cluster, database.url, `killed-${randomUUID().slice(0, 8)}`)
    const { REDIS_URL: _singleRedis, ...environment } = process.env
    child = spawn(process.execPath, [new URL('../src/server.ts', import.meta.url).pathname], {
      env: { ...environment, ...settings, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    const project = await judgedProject(db, keyHex, judge.url, 'killed')
    await storeSpans(db, [span(project.projectId, 'ANSWER-killed')])
    await summariseAll(db)
    for (const deadline = Date.now() + 30_000; judge.inFlight() === 0 && Date.now() < deadline; ) await sleep(20)
    assert.equal(judge.inFlight(), 1, 'the spawned evaluator is judging')
    child.kill('SIGKILL')
    await once(child, 'exit')

    const killedAt = Date.now()
    survivor = await buildApp(loadConfig(EvaluatorConfigSchema, settings), { db })
    await survivor.ready()
    const jobs = async () => (await listJudgments(db, { projectId: project.projectId, evaluatorId: project.evaluatorId, limit: 10 })).jobs
    for (const deadline = Date.now() + 40_000; (await jobs())[0]?.status !== 'completed' && Date.now() < deadline; ) await sleep(200)
    // Its lock lapses after 10 s, and a stalled check every 5 s hands it on; then a 3 s call.
    const redoneMs = Date.now() - killedAt
    assert.deepEqual((await jobs()).map((job) => [job.status, job.attempts]), [['completed', 2]])
    assert.ok(redoneMs < 25_000, `judged ${redoneMs} ms after the kill`)
    const scores = (await listScores(db, { projectId: project.projectId, limit: 10, name: 'fine' })).scores
    assert.equal(scores.length, 1)
    assert.deepEqual(judge.asked, ['ANSWER-killed', 'ANSWER-killed'], 'the killed call, and the one redone')
  })
})
