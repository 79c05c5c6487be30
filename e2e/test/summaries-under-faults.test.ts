import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { displayPrefix, generateApiKey, hashApiKey } from '@tracewell/auth'
import { testEnvironment } from '@tracewell/config'
import { countSpans, createProject, createTeam, insertApiKey, sql, summaryBacklog } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { seededRandom } from '@tracewell/test-support'
import { summaryMismatches } from '@tracewell/write-path'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { eventually, startAll, startService, type RunningService } from '../src/processes.ts'

// Two ingests and three writers (each running a summariser) on one database and one queue. Every
// trace's spans are split across two requests sent to different ingests; meanwhile writers are
// SIGKILLed and replaced, mid-job and mid-fold. Afterwards every acknowledged span is stored once,
// and every summary (traces, sessions, usage rollups) equals its recomputation from the spans.

const TRACES = 400
const second = 1_000_000_000n

let database: TestDatabase
const running: RunningService[] = []

before(async () => {
  database = await createTestDatabase()
})
after(async () => {
  await Promise.all(running.map((service) => service.stop()))
  await database.drop()
})

/** One OTLP JSON request body holding the given spans of one trace. */
function body(traceId: string, spans: ReadonlyArray<{ spanId: string; parent: string; model: string | null; start: bigint; session: string | null; user: string | null; error: boolean }>): string {
  const string = (key: string, value: string) => ({ key, value: { stringValue: value } })
  const int = (key: string, value: number) => ({ key, value: { intValue: String(value) } })
  return JSON.stringify({
    resourceSpans: [{
      resource: { attributes: [string('service.name', 'faulty-app')] },
      scopeSpans: [{
        scope: { name: 'fault-test' },
        spans: spans.map((span) => ({
          traceId, spanId: span.spanId, parentSpanId: span.parent, name: span.model === null ? 'step' : 'chat', kind: 1,
          startTimeUnixNano: String(span.start), endTimeUnixNano: String(span.start + 1_234_567_891n),
          status: { code: span.error ? 2 : 1 },
          attributes: [
            ...(span.model === null ? [] : [string('llm.vendor', 'openai'), string('llm.request.model', span.model), int('llm.usage.prompt_tokens', 100), int('llm.usage.completion_tokens', 20)]),
            ...(span.session === null ? [] : [string('session.id', span.session)]),
            ...(span.user === null ? [] : [string('user_id', span.user)]),
          ],
        })),
      }],
    }],
  })
}

test('with writers SIGKILLed mid-run, every acknowledged span counts exactly once in every summary', async () => {
  const { REDIS_URL } = testEnvironment()
  const team = await createTeam(database.db, { name: 'faults' })
  const project = await createProject(database.db, { teamId: team.id, name: 'faults' })
  const key = generateApiKey('project')
  await insertApiKey(database.db, { kind: 'project', teamId: team.id, projectId: project.id, keyHash: hashApiKey(key), prefix: displayPrefix(key) })

  const shared = { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: testQueuePrefix('faults') }
  // Short job locks, so a killed writer's job is redone within seconds; small folds, so kills land mid-fold.
  const writerEnv = { ...shared, WRITER_LOCK_DURATION_MS: '2000', WRITER_STALLED_INTERVAL_MS: '1000', WRITER_CONCURRENCY: '2', SUMMARY_POLL_MS: '20', SUMMARY_FOLD_MAX_TRACES: '100' }
  const startWriter = () => startService('writer', 'apps/writer/src/server.ts', writerEnv)
  const ingests = await startAll([() => startService('ingest', 'apps/ingest/src/server.ts', shared), () => startService('ingest', 'apps/ingest/src/server.ts', shared)] as const)
  running.push(...ingests)
  const writers: RunningService[] = await startAll([startWriter, startWriter, startWriter] as const)
  running.push(...writers)

  // The chaos: every 1.5 s a writer is killed, and a new one started in its place (not waited
  // for: the next kill may come while it starts, as in a crash loop).
  let kills = 0
  let chaos = true
  const replacements: Array<Promise<void>> = []
  const chaosLoop = (async () => {
    const random = seededRandom(11)
    while (chaos) {
      await sleep(1_500)
      if (!chaos || writers.length === 0) continue
      const victim = writers.splice(Math.floor(random() * writers.length), 1)[0] as RunningService
      victim.process.kill('SIGKILL')
      kills++
      replacements.push(startWriter().then((replacement) => {
        running.push(replacement)
        writers.push(replacement)
      }))
    }
  })()

  // The traffic: each trace's spans in two requests, to the two ingests, retried until acknowledged.
  const random = seededRandom(7)
  const start = 1_767_225_600n * second
  let sent = 0
  const send = async (url: string, text: string) => {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(`${url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: text }).catch(() => undefined)
      if (response?.status === 200) return
      assert.ok(attempt < 50, `a request was refused ${attempt} times (last: ${response?.status})`)
      await sleep(100)
    }
  }
  const traces = Array.from({ length: TRACES }, (_, t) => {
    const traceId = randomBytes(16).toString('hex')
    const count = 2 + Math.floor(random() * 7)
    const session = random() < 0.6 ? `session-${t % 23}` : null
    const user = random() < 0.7 ? `user-${t % 9}` : null
    const traceStart = start + BigInt(Math.floor(random() * 4 * 3600)) * second
    const spans = Array.from({ length: count }, (_, s) => ({
      spanId: (s + 1).toString(16).padStart(16, '0'), parent: s === 0 ? '' : '0000000000000001',
      model: random() < 0.7 ? (random() < 0.5 ? 'gpt-4o' : 'gpt-4o-mini') : null,
      start: traceStart + BigInt(s) * 200_000_000n, session, user, error: random() < 0.1,
    }))
    sent += count
    const half = Math.ceil(count / 2)
    return [body(traceId, spans.slice(0, half)), body(traceId, spans.slice(half))] as const
  })
  // Paced over about 12 s, so that the kills land while spans are being stored and folded.
  const queue = [...traces]
  const paceMs = 12_000 / (TRACES / 4)
  await Promise.all(Array.from({ length: 4 }, async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      await sleep(paceMs)
      const [firstHalf, secondHalf] = random() < 0.5 ? next : [next[1], next[0]]
      await send((ingests[0] as RunningService).url, firstHalf)
      await send((ingests[1] as RunningService).url, secondHalf)
    }
  }))
  chaos = false
  await chaosLoop
  await Promise.all(replacements)
  assert.ok(kills >= 3, `only ${kills} writers were killed: the run was too short to test anything`)

  await eventually(async () => ((await countSpans(database.db, project.id)) === sent ? true : undefined), 120_000, `all ${sent} spans stored`)
  await eventually(async () => ((await summaryBacklog(database.db)).deltas === 0 ? true : undefined), 60_000, 'the summaries to catch up')
  assert.equal(await countSpans(database.db, project.id), sent)
  assert.deepEqual(await summaryMismatches(database.db, project.id), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
  const { rows } = await sql<{ traces: number }>`select count(*)::integer as traces from trace_summaries where project_id = ${project.id}`.execute(database.db)
  assert.equal(rows[0]?.traces, TRACES)
})
