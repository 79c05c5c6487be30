import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { gzipSync } from 'node:zlib'
import { after, before, describe, it } from 'node:test'
import { Redis } from 'ioredis'
import { decodeTraceBody, encodeSpanRecords } from '@tracewell/otlp'
import { releaseBody } from '@tracewell/queue'
import { readBody } from '../src/body/body.reader.ts'
import { startIngest, testEnv, type IngestHarness } from './support/ingest-harness.ts'

// Ingest frees each body's memory once it has decoded it, and the records it queues once the queue
// has answered for them (releaseBody, tested in @tracewell/queue). What a user depends on: what
// Redis holds is exactly the spans sent, decoded.

const limits = { maxBodyBytes: 10 * 1024 * 1024, maxInflatedBytes: 20 * 1024 * 1024 }

it('a large body as readBody assembles it owns its memory, which releaseBody frees', async () => {
  const body = await readBody(Readable.from([Buffer.alloc(40_000, 'a'), Buffer.alloc(40_000, 'b')]), 'identity', limits)
  assert.equal(body.length, 80_000)
  releaseBody(body)
  assert.equal(body.length, 0)
})

describe('a large body through ingest', () => {
  let ingest: IngestHarness
  let redis: Redis
  before(async () => {
    ingest = await startIngest()
    redis = new Redis(testEnv.REDIS_URL)
  })
  after(async () => {
    redis.disconnect()
    await ingest.close()
  })

  const spans = 300
  const body = Buffer.from(
    JSON.stringify({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: Array.from({ length: spans }, (_, index) => ({
                traceId: 'ab'.repeat(16),
                spanId: (index + 1).toString(16).padStart(16, '0'),
                name: `span ${index}`,
                startTimeUnixNano: '1700000000000000000',
                endTimeUnixNano: '1700000000500000000',
                attributes: [{ key: 'llm.request.messages', value: { stringValue: `[{"role":"user","content":"${'question '.repeat(40)}${index}"}]` } }],
              })),
            },
          ],
        },
      ],
    }),
  )

  for (const encoding of ['identity', 'gzip'] as const) {
    it(`is queued as the records of the spans sent (${encoding}), though ingest freed its copies`, async () => {
      await ingest.queue.obliterate({ force: true })
      const response = await ingest.app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { 'x-api-key': ingest.tenant.projectKey, 'content-type': 'application/json', ...(encoding === 'gzip' ? { 'content-encoding': 'gzip' } : {}) },
        payload: encoding === 'gzip' ? gzipSync(body) : body,
      })
      assert.equal(response.statusCode, 200, response.body)
      const [job] = await ingest.queue.getJobs(['wait', 'prioritized'], 0, -1)
      assert.ok(job?.data.version === 3, 'a job that carries its body by reference')
      const payload = Object.values(await redis.hgetallBuffer(job.data.payloadKey))
      assert.equal(payload.length, 1)
      assert.equal(job.data.requests[0]?.encoding, 'records')
      assert.ok((payload[0] as Buffer).equals(encodeSpanRecords(decodeTraceBody(body, 'json').spans)), 'the queued bytes are the records of the (inflated) body sent')
      const queued = await ingest.queuedSpans()
      assert.equal(queued.length, spans)
      assert.equal(queued.at(-1)?.span.name, `span ${spans - 1}`)
    })
  }
})
