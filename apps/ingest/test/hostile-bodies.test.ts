import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { denseJson, gzipped, malformedStringsJson } from '@tracewell/test-support'
import { startIngest, type IngestHarness } from './support/ingest-harness.ts'

// Bodies that are small on the wire and huge once inflated must cost one bounded pass, answer
// with a 4xx that says what is wrong, and leave the server answering others meanwhile. How fast
// that is under load is a benchmark's question (bench:hostile), not this file's.

const INFLATED = 48 * 1024 * 1024
const MAX_JSON_VALUES = 1_000_000

let ingest: IngestHarness
before(async () => {
  ingest = await startIngest({ MAX_BODY_BYTES: String(10 << 20), MAX_INFLATED_BYTES: String(64 << 20), MAX_JSON_VALUES: String(MAX_JSON_VALUES) })
})
after(async () => {
  await ingest.close()
})

function postGzip(body: Buffer) {
  return ingest.app.inject({
    method: 'POST',
    url: '/api/trace',
    headers: { 'x-api-key': ingest.tenant.projectKey, 'content-type': 'application/json', 'content-encoding': 'gzip' },
    payload: body,
  })
}

/** Sends `body` and counts the /healthz answers served while it was in flight. */
async function postWhileProbingHealth(body: Buffer) {
  let pending = true
  let healthAnswers = 0
  const probe = (async () => {
    while (pending) {
      const health = await ingest.app.inject('/healthz')
      assert.equal(health.statusCode, 200)
      healthAnswers++
      // inject() answers within one turn of the event loop; a client's next probe comes later.
      await nextTurn()
    }
  })()
  const response = await postGzip(body).finally(() => {
    pending = false
  })
  await probe
  return { response, healthAnswers }
}

describe('a hostile body', () => {
  it('72 KB of gzip inflating to 48 MB of malformed JSON: a 400 saying where, without blocking the server', async () => {
    const { text, position } = malformedStringsJson(INFLATED)
    const body = gzipped(text)
    assert.ok(body.length < 72 * 1024, `${body.length} bytes gzipped`)
    const { response, healthAnswers } = await postWhileProbingHealth(body)
    assert.equal(response.statusCode, 400)
    assert.equal(response.body, JSON.stringify({ status: 400, message: `body: malformed JSON (Unexpected token '}' at position ${position})` }))
    // The body is checked chunk by chunk as it inflates; /healthz was served between the chunks.
    assert.ok(healthAnswers > 10, `${healthAnswers} /healthz answers while the body was checked`)
    assert.deepEqual(await ingest.queuedSpans(), [])
  })

  it('48 MB of dense malformed JSON: a 413 as soon as the values pass MAX_JSON_VALUES', async () => {
    const { response, healthAnswers } = await postWhileProbingHealth(gzipped(denseJson(INFLATED, 'x]')))
    assert.equal(response.statusCode, 413)
    assert.equal(response.body, `{"status":413,"message":"body: more than ${MAX_JSON_VALUES} JSON values in one request (MAX_JSON_VALUES)"}`)
    assert.ok(healthAnswers > 0)
  })

  it('48 MB of valid JSON of the wrong shape: the same 413, before anything is parsed', async () => {
    const text = `{"resourceSpans":[{"scopeSpans":${denseJson(INFLATED - 40)}}]}`
    const response = await postGzip(gzipped(text))
    assert.equal(response.statusCode, 413)
    assert.equal(response.body, `{"status":413,"message":"body: more than ${MAX_JSON_VALUES} JSON values in one request (MAX_JSON_VALUES)"}`)
  })

  it('large valid JSON of the wrong shape within the limits: parsed once, refused at the first problem', async () => {
    const text = `{"resourceSpans":"${'a'.repeat(8 << 20)}"}`
    const response = await postGzip(gzipped(text))
    assert.equal(response.statusCode, 400)
    assert.equal(response.body, '{"status":400,"message":"resourceSpans: expected an array of ResourceSpans"}')
  })

  it('nesting deeper than 512 levels: a 400', async () => {
    const response = await postGzip(gzipped(`${'['.repeat(300_000)}${']'.repeat(300_000)}`))
    assert.equal(response.statusCode, 400)
    assert.equal(response.body, '{"status":400,"message":"body: JSON nested deeper than 512 levels"}')
  })

  it('a large malformed body with multi-byte characters: the position counts characters, as JSON.parse does', async () => {
    const text = `["${'é'.repeat(200_000)}", 1 2]`
    assert.ok(Buffer.byteLength(text) > 256 * 1024)
    const response = await postGzip(gzipped(text))
    assert.equal(response.statusCode, 400)
    assert.equal(response.body, `{"status":400,"message":"body: malformed JSON (Unexpected token '2' at position ${text.indexOf(' 2') + 1})"}`)
  })

  it('a large valid body is still accepted whole', async () => {
    const attribute = { key: 'llm.prompt', value: { stringValue: 'p'.repeat(1 << 20) } }
    const span = (i: number) => ({ traceId: '5b8efff798038103d269b633813fc60c', spanId: `00000000000000${String(i).padStart(2, '0')}`, name: 'big', startTimeUnixNano: '1', endTimeUnixNano: '2', attributes: [attribute] })
    const text = JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span(1), span(2)] }] }] })
    const response = await postGzip(gzipped(text))
    assert.equal(response.statusCode, 200)
    const queued = await ingest.queuedSpans()
    assert.deepEqual(queued.map(({ span }) => [span.spanId, span.attributes['llm.prompt']]), [
      ['0000000000000001', { stringValue: 'p'.repeat(1 << 20) }],
      ['0000000000000002', { stringValue: 'p'.repeat(1 << 20) }],
    ])
  })
})
