import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { IngestConfigSchema, loadConfig } from '@tracewell/config'
import { countSpans, upsertProjectIngestLimit } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { createSpanBatchQueueConnection, projectTurnsKeyOf, queueRedisTargetOf, shardIndexOf, shardSlot, spanBatchShards, spanRateLimitKeyOf, type QueueRedis } from '@tracewell/queue'
import { OwnRedisCluster } from '@tracewell/test-support'
import type { Cluster } from 'ioredis'
import { startSpanBatchWorker, type SpanBatchWorker } from '@tracewell/writer'
import { buildApp } from '../src/app.ts'
import { otlpJson, traceSpans } from './support/otlp-bodies.ts'
import { createTenant, type Tenant } from './support/ingest-harness.ts'

// Ingest → a real Redis Cluster (redis-server --cluster-enabled yes on private ports) → the writer
// → Postgres: every acknowledged span stored once, shards on different masters, and a master
// killed under load (restarted from its AOF, or replaced by its replica with QUEUE_REPLICA_ACKS=1)
// losing no acknowledged span.

const silent = { info() {}, warn() {}, error() {} }
const SHARDS = 3

interface Pipeline {
  cluster: OwnRedisCluster
  database: TestDatabase
  ingest: App
  writer: SpanBatchWorker
  tenants: Tenant[]
  prefix: string
  /** Spans acknowledged per project since the pipeline started, across tests. */
  acknowledged: Map<string, number>
  close(): Promise<void>
}

async function startPipeline(cluster: OwnRedisCluster, settings: Record<string, string> = {}): Promise<Pipeline> {
  const database = await createTestDatabase()
  const prefix = `cluster-${randomUUID().slice(0, 8)}`
  const config = loadConfig(IngestConfigSchema, {
    DATABASE_URL: database.url,
    REDIS_CLUSTER_NODES: cluster.seeds,
    QUEUE_PREFIX: prefix,
    QUEUE_SHARDS: String(SHARDS),
    LOG_LEVEL: 'silent',
    ...settings,
  })
  const ingest = await buildApp(config, { db: database.db })
  await ingest.ready()
  const redis = queueRedisTargetOf(config)
  assert.ok(redis)
  const writer = startSpanBatchWorker({ db: database.db, redis, prefix, shards: SHARDS, concurrency: 3, logger: silent })
  const tenants: Tenant[] = []
  // Project ids are random: six of them all fall on one shard once in about 240 runs, and leave
  // some shard without a project in one run of four, so more are made until every shard has one.
  const shardsUsed = () => new Set(tenants.map((tenant) => shardIndexOf(tenant.projectId, SHARDS))).size
  for (let i = 0; i < 6 || (shardsUsed() < SHARDS && i < 60); i++) tenants.push(await createTenant(database.db, `cluster-${i}`))
  return {
    cluster,
    database,
    ingest,
    writer,
    tenants,
    prefix,
    acknowledged: new Map(),
    async close() {
      await writer.close()
      await ingest.close()
      await database.drop()
    },
  }
}

/** Sends one request of `count` fresh spans, resending the same body on 503 or 429 until it gets 200. */
async function sendUntilAcknowledged(app: App, tenant: Tenant, count: number): Promise<{ spans: number; refused: number }> {
  const body = otlpJson(traceSpans(randomBytes(16).toString('hex'), count))
  let refused = 0
  for (;;) {
    const response = await app.inject({ method: 'POST', url: '/v1/traces', headers: { 'x-api-key': tenant.projectKey, 'content-type': 'application/json' }, payload: body })
    if (response.statusCode === 200) return { spans: count, refused }
    assert.ok([429, 503].includes(response.statusCode), `unexpected ${response.statusCode}: ${response.body}`)
    refused++
    if (refused > 600) assert.fail(`a request was refused ${refused} times: ${response.body}`)
    await sleep(50)
  }
}

/** Load from every tenant for `ms`, `parallel` requests at a time; the spans acknowledged per project so far. */
async function load(pipeline: Pipeline, ms: number, parallel = 6): Promise<{ acknowledged: Map<string, number>; refused: number }> {
  const acknowledged = pipeline.acknowledged
  let refused = 0
  const until = Date.now() + ms
  await Promise.all(
    Array.from({ length: parallel }, async (_, lane) => {
      for (let i = 0; Date.now() < until; i++) {
        const tenant = pipeline.tenants[(lane + i) % pipeline.tenants.length] as Tenant
        const sent = await sendUntilAcknowledged(pipeline.ingest, tenant, 1 + (i % 5))
        acknowledged.set(tenant.projectId, (acknowledged.get(tenant.projectId) ?? 0) + sent.spans)
        refused += sent.refused
      }
    }),
  )
  return { acknowledged, refused }
}

/** Waits until Postgres holds exactly the acknowledged spans of every project, and says what it holds otherwise. */
async function assertStoredOnce(pipeline: Pipeline, acknowledged: Map<string, number>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let stored = new Map<string, number>()
  while (Date.now() < deadline) {
    stored = new Map(await Promise.all(pipeline.tenants.map(async (tenant) => [tenant.projectId, await countSpans(pipeline.database.db, tenant.projectId)] as const)))
    if (pipeline.tenants.every((tenant) => stored.get(tenant.projectId) === (acknowledged.get(tenant.projectId) ?? 0))) return
    await sleep(200)
  }
  assert.deepEqual(Object.fromEntries(stored), Object.fromEntries(acknowledged), 'stored spans per project, against those acknowledged')
}

describe('the queue on a Redis Cluster of three masters (AOF, appendfsync always)', { timeout: 240_000 }, () => {
  const cluster = new OwnRedisCluster({ basePort: 7110, masters: 3 })
  let pipeline: Pipeline
  let inspect: QueueRedis
  before(async () => {
    await cluster.start()
    pipeline = await startPipeline(cluster, { INGEST_RATE_LIMIT_REFRESH_MS: '200' })
    inspect = createSpanBatchQueueConnection({ clusterNodes: [{ host: '127.0.0.1', port: 7110 }] }, 'worker')
  })
  after(async () => {
    inspect?.disconnect()
    await pipeline?.close()
    await cluster.stop()
  })

  it('puts the shards on different masters, each shard in one slot', async () => {
    const shards = spanBatchShards({ prefix: pipeline.prefix, count: SHARDS, cluster: true })
    const masters = await Promise.all(shards.map((shard) => cluster.masterOf(shardSlot(shard))))
    assert.equal(new Set(masters).size, SHARDS, `masters of the shards: ${masters.join(', ')}`)
    // Redis's own slot function agrees: the queue's keys, payloads and markers share the shard's slot.
    const [node] = (inspect as Cluster).nodes('master')
    assert.ok(node)
    for (const shard of shards) {
      for (const key of [`${shard.prefix}:span-batches:wait`, `${shard.prefix}:span-batches:payload:1-x`, `${shard.prefix}:span-batches:payload:1-x:stored`]) {
        assert.equal(await node.cluster('KEYSLOT', key), shardSlot(shard), key)
      }
    }
  })

  it('stores every acknowledged span once, from projects on every shard', async () => {
    const usedShards = new Set(pipeline.tenants.map((tenant) => shardIndexOf(tenant.projectId, SHARDS)))
    assert.ok(usedShards.size >= 2, 'the projects spread over shards')
    const { acknowledged, refused } = await load(pipeline, 1_500)
    assert.equal(refused, 0, 'nothing refused while the cluster is healthy')
    await assertStoredOnce(pipeline, acknowledged)
    const ready = await pipeline.ingest.inject({ method: 'GET', url: '/readyz' })
    assert.equal(ready.statusCode, 200, ready.body)
  })

  it('loses no acknowledged span when a master is killed under load and restarted from its AOF', async () => {
    const shard = spanBatchShards({ prefix: pipeline.prefix, count: SHARDS, cluster: true })[0]
    assert.ok(shard)
    const victim = await cluster.masterOf(shardSlot(shard))
    const fault = (async () => {
      await sleep(700)
      await cluster.kill(victim)
      await sleep(300)
      // Ingest stays ready while the other masters take their shards' writes, and names the shard it cannot write.
      const ready = await pipeline.ingest.inject({ method: 'GET', url: '/readyz' })
      await sleep(1_200)
      await cluster.startNode(victim)
      return ready
    })()
    const { acknowledged } = await load(pipeline, 4_000)
    const ready = await fault
    assert.equal(ready.statusCode, 200, ready.body)
    const unwritable = ready.json<{ details: { unwritableShards: Array<{ shard: number; reason: string }> } }>().details.unwritableShards
    assert.deepEqual(unwritable.map((entry) => entry.shard), [shard.index], '/readyz names the shard of the master that is down')
    await cluster.waitUntilHealthy()
    await assertStoredOnce(pipeline, acknowledged)
  })

  it("limits a project's rate through the cluster, its bucket and its jobs' turns in its shard's slot", async () => {
    const tenant = pipeline.tenants[0] as Tenant
    await upsertProjectIngestLimit(pipeline.database.db, { projectId: tenant.projectId, spansPerSecond: 1, burst: 3 })
    await sleep(600) // ingest reloads the limits every 200 ms here
    const send = (spans: number) =>
      pipeline.ingest.inject({ method: 'POST', url: '/v1/traces', headers: { 'x-api-key': tenant.projectKey, 'content-type': 'application/json' }, payload: otlpJson(traceSpans(randomBytes(16).toString('hex'), spans)) })
    const first = await send(3)
    assert.equal(first.statusCode, 200, first.body)
    assert.equal(first.headers['ratelimit-limit'], '3')
    const refused = await send(1)
    assert.equal(refused.statusCode, 429, refused.body)
    assert.ok(Number(refused.headers['retry-after']) >= 1)
    const shard = spanBatchShards({ prefix: pipeline.prefix, count: SHARDS, cluster: true })[shardIndexOf(tenant.projectId, SHARDS)]
    assert.ok(shard)
    const [node] = (inspect as Cluster).nodes('master')
    assert.ok(node)
    for (const key of [spanRateLimitKeyOf(shard.prefix, tenant.projectId), projectTurnsKeyOf(shard.prefix, tenant.projectId)]) {
      assert.equal(await node.cluster('KEYSLOT', key), shardSlot(shard), key)
    }
    assert.equal(await inspect.exists(spanRateLimitKeyOf(shard.prefix, tenant.projectId)), 1, 'the bucket is where its key says')
    // The 3 spans acknowledged here are stored once too; the refused one is not.
    pipeline.acknowledged.set(tenant.projectId, (pipeline.acknowledged.get(tenant.projectId) ?? 0) + 3)
    await assertStoredOnce(pipeline, pipeline.acknowledged)
  })
})

describe('the queue on a Redis Cluster with a replica per master and QUEUE_REPLICA_ACKS=1', { timeout: 240_000 }, () => {
  const cluster = new OwnRedisCluster({ basePort: 7120, masters: 3, replicas: 1 })
  let pipeline: Pipeline
  before(async () => {
    await cluster.start()
    pipeline = await startPipeline(cluster, { QUEUE_REPLICA_ACKS: '1', QUEUE_REPLICA_TIMEOUT_MS: '500' })
  })
  after(async () => {
    await pipeline?.close()
    await cluster.stop()
  })

  it('loses no acknowledged span when a master is killed and its replica takes over', async () => {
    const shard = spanBatchShards({ prefix: pipeline.prefix, count: SHARDS, cluster: true })[1]
    assert.ok(shard)
    const victim = await cluster.masterOf(shardSlot(shard))
    const fault = (async () => {
      await sleep(1_000)
      await cluster.kill(victim)
      // Until the old master is back (as the new master's replica), WAIT can find no replica for
      // that shard, so its requests get 503: durability is not traded for availability.
      await sleep(3_000)
      await cluster.startNode(victim)
    })()
    const { acknowledged } = await load(pipeline, 8_000)
    await fault
    assert.notEqual(await cluster.masterOf(shardSlot(shard)), victim, 'the replica was promoted')
    await assertStoredOnce(pipeline, acknowledged)
  })
})
