import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { ControlPlaneConfigSchema, loadConfig } from '@tracewell/config'
import { createDb, migrateToLatest, sql, type Db, type SpanInsert } from '@tracewell/db'
import type { App } from '@tracewell/http'
import type { AttributeMap } from '@tracewell/span-schema'
import { freePort, OwnPostgres } from '@tracewell/test-support'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { buildApp } from '../src/app.ts'
import { adminKey, seedWorkspace, type Workspace } from './helper.ts'

// DATABASE_READ_URL against a real streaming replica: a private primary on its own port and a
// pg_basebackup -R copy of it that follows it. Replay is paused on the replica to tell which of
// the two answered: a trace written to the primary only is invisible to a read the replica served.

const second = 1_000_000_000n
const t0 = 1_767_225_600n * second

function span(projectId: string, traceId: string): SpanInsert {
  return {
    projectId, traceId, spanId: '000000000000000a', parentSpanId: null, name: 'chat', kind: 2,
    startTimeUnixNano: String(t0), endTimeUnixNano: String(t0 + second), durationNs: String(second),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    attributes: {} as AttributeMap, resourceAttributes: {} as AttributeMap, events: [], links: [],
  }
}

describe('query routes on a streaming replica (DATABASE_READ_URL)', { timeout: 180_000 }, () => {
  let primary: OwnPostgres
  let replica: OwnPostgres
  let primaryDb: Db
  let replicaAdmin: Db
  let app: App
  let ws: Workspace
  const get = (url: string) => app.inject({ url, headers: { 'x-api-key': ws.projectKey } })
  const listed = async () => ((await get('/api/traces')).json() as { traces: Array<{ traceId: string }> }).traces.map((trace) => trace.traceId).sort()
  const readsBy = async (database: 'replica' | 'primary') =>
    Number(new RegExp(`^tracewell_control_plane_query_reads_total\\{database="${database}"\\} (\\d+)$`, 'm').exec((await app.inject('/metrics')).body)?.[1] ?? Number.NaN)
  /** Waits until the replica has replayed everything the primary has written. */
  const replicaCaughtUp = async () => {
    const { rows } = await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(primaryDb)
    for (let attempt = 0; attempt < 200; attempt++) {
      const caught = await sql<{ ok: boolean }>`select pg_last_wal_replay_lsn() >= ${rows[0]!.lsn}::pg_lsn as ok`.execute(replicaAdmin)
      if (caught.rows[0]?.ok) return
      await sleep(50)
    }
    throw new Error('the replica did not catch up within 10 s')
  }

  before(async () => {
    primary = new OwnPostgres(await freePort())
    await primary.init()
    primaryDb = createDb({ databaseUrl: primary.url, poolSize: 4 })
    await migrateToLatest(primaryDb)
    replica = new OwnPostgres(await freePort())
    await replica.initReplicaOf(primary)
    replicaAdmin = createDb({ databaseUrl: replica.url, poolSize: 1 })
    ws = await seedWorkspace(primaryDb, 'Replicated')
    await storeSpans(primaryDb, [span(ws.projectId, 'a'.repeat(32))])
    await summariseAll(primaryDb)
    const config = loadConfig(ControlPlaneConfigSchema, { DATABASE_URL: primary.url, DATABASE_READ_URL: replica.url, LOG_LEVEL: 'silent', ADMIN_API_KEY: adminKey, KEY_CACHE_TTL_MS: '200' })
    app = await buildApp(config)
    await app.ready()
    await replicaCaughtUp()
  })
  after(async () => {
    await app?.close()
    await replicaAdmin?.destroy()
    await primaryDb?.destroy()
    await replica?.destroy()
    await primary?.destroy()
  })

  it('answers the trace list from the replica: a trace written while its replay is paused is not listed until it resumes', async () => {
    assert.deepEqual(await listed(), ['a'.repeat(32)])
    await sql`select pg_wal_replay_pause()`.execute(replicaAdmin)
    await storeSpans(primaryDb, [span(ws.projectId, 'b'.repeat(32))])
    await summariseAll(primaryDb)
    const before = await readsBy('replica')
    assert.deepEqual(await listed(), ['a'.repeat(32)], 'the replica, paused, has not replayed it')
    assert.equal(await readsBy('replica'), before + 1)
    await sql`select pg_wal_replay_resume()`.execute(replicaAdmin)
    await replicaCaughtUp()
    assert.deepEqual(await listed(), ['a'.repeat(32), 'b'.repeat(32)])
  })

  it('reads its own write: after a DELETE through the API, a read the replica cannot yet serve goes to the primary', async () => {
    await sql`select pg_wal_replay_pause()`.execute(replicaAdmin)
    try {
      const deleted = await app.inject({ method: 'DELETE', url: `/api/traces/${'b'.repeat(32)}?project_id=${ws.projectId}`, headers: { 'x-api-key': ws.teamKey } })
      assert.equal(deleted.statusCode, 204, deleted.body)
      const before = await readsBy('primary')
      assert.deepEqual(await listed(), ['a'.repeat(32)], 'not the deleted trace, which the paused replica still has')
      assert.equal((await get(`/api/traces/${'b'.repeat(32)}`)).statusCode, 404)
      assert.equal(await readsBy('primary'), before + 2)
    } finally {
      await sql`select pg_wal_replay_resume()`.execute(replicaAdmin)
    }
    await replicaCaughtUp()
    const before = await readsBy('replica')
    assert.deepEqual(await listed(), ['a'.repeat(32)])
    assert.equal(await readsBy('replica'), before + 1, 'the replica again, once it has the delete')
  })

  it('falls back to the primary while the replica is down', async () => {
    await replica.stop()
    try {
      const before = await readsBy('primary')
      assert.deepEqual(await listed(), ['a'.repeat(32)])
      assert.equal(await readsBy('primary'), before + 1)
    } finally {
      await replica.start()
    }
  })
})
