import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { EvaluatorConfigSchema, loadConfig } from '@tracewell/config'
import { addDatasetItems, createDataset, createExperiment, createPromptset, createPromptVersion, findExperiment, listEvaluationJobs, listExperimentResults } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { OwnRedisCluster } from '@tracewell/test-support'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { buildApp } from '../src/index.ts'
import { judgedProject, span, startSlowJudge } from './support/judge-fixtures.ts'

// The evaluator on a real Redis Cluster (redis-server --cluster-enabled yes on private ports):
// its two job queues, each in a hash slot of its own, judge a new trace and run an experiment item
// (whose trace is then judged), each once.

const keyHex = randomBytes(32).toString('hex')

describe('the evaluator on a Redis Cluster', { timeout: 120_000 }, () => {
  const cluster = new OwnRedisCluster({ basePort: 7340, masters: 3 })
  let database: TestDatabase
  let judge: Awaited<ReturnType<typeof startSlowJudge>>
  let app: App

  before(async () => {
    await cluster.start()
    judge = await startSlowJudge(50)
    database = await createTestDatabase()
    const config = loadConfig(EvaluatorConfigSchema, {
      DATABASE_URL: database.url,
      REDIS_CLUSTER_NODES: cluster.seeds,
      QUEUE_PREFIX: `cluster-${randomUUID().slice(0, 8)}`,
      LOG_LEVEL: 'silent',
      LLM_CONNECTION_ENCRYPTION_KEY: keyHex,
      EVALUATOR_POLL_INTERVAL_MS: '100',
      EVALUATOR_TRACE_QUIET_MS: '0',
    })
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

    const dataset = await createDataset(db, { projectId: project.projectId, name: 'questions', description: '', metadata: {} })
    const { version, items } = await addDatasetItems(db, dataset.id, [{ id: 'q1', input: { question: 'ANSWER-item' }, expectedOutput: null, metadata: null, sourceTraceId: null, sourceSpanId: null }])
    const promptset = await createPromptset(db, { projectId: project.projectId, name: 'asker' })
    const prompt = await createPromptVersion(db, { promptsetId: promptset.id, value: 'Say {{question}}', variables: ['question'], model: 'model', modelSettings: {}, tags: [], note: '', spanId: null, live: false })
    const experiment = await createExperiment(db, {
      projectId: project.projectId, datasetId: dataset.id, datasetVersion: version, name: 'run', description: '', metadata: {}, kind: 'prompt',
      promptsetId: promptset.id, promptVersion: prompt.version, connectionId: project.connectionId, model: 'model', modelSettings: {}, evaluatorIds: [project.evaluatorId],
    }, items.map((item) => item.id))

    const jobs = async () => (await listEvaluationJobs(db, { projectId: project.projectId, evaluatorId: project.evaluatorId, limit: 10 })).jobs
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
