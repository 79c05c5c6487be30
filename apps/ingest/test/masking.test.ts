import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { upsertProjectMaskingRules } from '@tracewell/db'
import { decodeTraceBody, encodeSpanRecords } from '@tracewell/otlp'
import { Redis } from 'ioredis'
import { createTenant, startIngest, testEnv, type IngestHarness, type Tenant } from './support/ingest-harness.ts'
import { jsonProblem, nextTraceId, otlpJson, traceSpans } from './support/otlp-bodies.ts'

// What reaches Redis: a masked project's bodies hold no masked value, whether decoded in the
// request's thread or in a decode worker (bodies over 256 KiB), not even in the user id derived
// from them; a project without rules has its spans queued exactly as they came; and the answers
// are what they were without masking.

const email = 'mallory.secret@example.org'
const rules = [{ detector: 'email' as const }, { detector: 'secret' as const }]

/** A body of `count` spans, each with the email in its name, its user id and a prompt of `promptBytes`. */
function bodyWithEmails(count: number, promptBytes = 100, invalid: number[] = []): Buffer {
  const spans = traceSpans(nextTraceId(), count, invalid).map((span, i) => ({
    ...span,
    name: `step ${i} for ${email}`,
    attributes: [
      { key: 'llm.prompts', value: { stringValue: JSON.stringify([{ role: 'user', content: `${'x'.repeat(promptBytes)} reply to ${email}` }]) } },
      { key: 'user.id', value: { stringValue: email } },
    ],
  }))
  return Buffer.from(otlpJson(spans as never))
}

describe('masking before the queue', { timeout: 60_000 }, () => {
  let ingest: IngestHarness
  let unmasked: Tenant
  let redis: Redis

  before(async () => {
    ingest = await startIngest({ MASKING_RULES_REFRESH_MS: '100', DECODE_THREADS: '1' })
    unmasked = await createTenant(ingest.database.db, 'unmasked')
    await upsertProjectMaskingRules(ingest.database.db, ingest.tenant.projectId, rules)
    await sleep(400)
    redis = new Redis(testEnv.REDIS_URL)
  })
  after(async () => {
    redis.disconnect()
    await ingest.close()
  })

  /** Every body in Redis under this test's queue prefix. */
  async function queuedBodies(): Promise<Buffer[]> {
    const keys = await redis.keys(`${ingest.prefix}:*:payload:*`)
    const bodies = await Promise.all(keys.filter((key) => !key.endsWith(':stored')).map((key) => redis.hgetallBuffer(key)))
    return bodies.flatMap((hash) => Object.values(hash))
  }

  /** An empty queue: its jobs, and the bodies, which live beside BullMQ's keys. */
  async function clearQueue(): Promise<void> {
    await ingest.queue.obliterate({ force: true })
    const keys = await redis.keys(`${ingest.prefix}:*:payload:*`)
    if (keys.length > 0) await redis.del(...keys)
  }

  const post = (key: string, body: Buffer) =>
    ingest.app.inject({ method: 'POST', url: '/v1/traces', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: body })

  it('queues a project without rules as sent', async () => {
    await clearQueue()
    const body = bodyWithEmails(3)
    assert.equal((await post(unmasked.projectKey, body)).statusCode, 200)
    assert.deepEqual(await queuedBodies(), [encodeSpanRecords(decodeTraceBody(body, 'json').spans)])
  })

  for (const [label, promptBytes] of [
    ['decoded in the request’s thread', 100],
    ['decoded in a decode worker (over 256 KiB)', 40_000],
  ] as const) {
    it(`sends Redis no masked value, ${label}`, async () => {
      await clearQueue()
      const body = bodyWithEmails(10, promptBytes)
      assert.equal(body.length > 256 * 1024, promptBytes > 1000)
      const response = await post(ingest.tenant.projectKey, body)
      assert.deepEqual([response.statusCode, response.json()], [200, {}])
      const queued = await queuedBodies()
      assert.equal(queued.length, 1)
      assert.ok(!queued[0]?.toString().includes('mallory'), 'no email in Redis')
      const spans = (await ingest.queuedSpans()).map(({ span }) => span)
      assert.equal(spans.length, 10)
      assert.equal(spans[3]?.name, 'step 3 for [REDACTED:email]')
      const prompts = JSON.parse((spans[3]?.attributes['llm.prompts'] as { stringValue: string }).stringValue)
      assert.equal(prompts[0].content, `${'x'.repeat(promptBytes)} reply to [REDACTED:email]`)
      assert.equal(spans[3]?.userId, '[REDACTED:email]')
    })
  }

  it('answers partial success exactly as without rules, and queues only the valid spans, masked', async () => {
    await clearQueue()
    const body = bodyWithEmails(4, 100, [1])
    const masked = await post(ingest.tenant.projectKey, body)
    const plain = await post(unmasked.projectKey, body)
    assert.equal(masked.statusCode, 200)
    assert.deepEqual([masked.statusCode, masked.json()], [plain.statusCode, plain.json()])
    assert.deepEqual(masked.json(), { partialSuccess: { rejectedSpans: '1', errorMessage: `1 of 4 spans rejected: ${jsonProblem(1)}` } })
    const spans = await ingest.queuedSpans()
    const ours = spans.filter(({ projectId }) => projectId === ingest.tenant.projectId).map(({ span }) => span.name)
    assert.deepEqual(ours, ['step 0 for [REDACTED:email]', 'step 2 for [REDACTED:email]', 'step 3 for [REDACTED:email]'])
  })
})
