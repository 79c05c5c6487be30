import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { findTraceSpans } from '@tracewell/db'
import type { HostLookup } from '@tracewell/outbound'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// A playground run against a model that answers without end: the reply is read up to
// OUTBOUND_MAX_RESPONSE_BYTES (the default, 10 MiB), the run answers with that failure and is kept
// as a trace, and the control plane's memory comes back to where it was (a 300 MB reply once took
// it from 124 MB to 1.09 GB for good). And a model whose name resolves elsewhere after its
// connection was saved is refused at the call, the run failing with the rule.

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const MiB = 1024 * 1024
const replyBytes = 300 * MiB

/** Writes `total` bytes of `piece` (with backpressure), then ends; the bytes written, and when the connection closed. */
function pour(response: ServerResponse, first: string, piece: Buffer, total: number): { written: () => number; closed: Promise<unknown> } {
  let written = first.length
  const closed = once(response, 'close')
  response.write(first)
  const pump = () => {
    while (written < total && !response.destroyed) {
      written += piece.length
      if (!response.write(piece)) return void response.once('drain', pump)
    }
    if (!response.destroyed) response.end()
  }
  pump()
  return { written: () => written, closed }
}

describe('playground runs and the outbound bounds', { timeout: 120_000 }, () => {
  let cp: TestControlPlane
  let ws: Workspace
  let models: Server
  let connectionId: string
  let poured: { written: () => number; closed: Promise<unknown> } | undefined
  let movingAddress = '127.0.0.1'
  const lookup: HostLookup = async (host) => [{ address: host === 'moving.test' ? movingAddress : '127.0.0.1', family: 4 }]
  const run = (payload: Record<string, unknown>) =>
    cp.app.inject({ method: 'POST', url: `/api/playground/runs?project_id=${ws.projectId}`, headers: { 'x-api-key': ws.teamKey }, payload: { connectionId, messages: [{ role: 'user', content: 'Tell me everything.' }], ...payload } })

  before(async () => {
    models = createServer(async (request, response) => {
      const chunks: Buffer[] = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; stream?: boolean }
      if (body.model === 'small') {
        return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
          id: 'c', object: 'chat.completion', created: 0, model: 'small', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Short.' } }],
          usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
        }))
      }
      if (body.stream) {
        response.writeHead(200, { 'content-type': 'text/event-stream' })
        const event = Buffer.from(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'huge', choices: [{ index: 0, delta: { content: 'a'.repeat(64 * 1024) }, finish_reason: null }] })}\n\n`)
        poured = pour(response, '', event, replyBytes)
        return
      }
      // One JSON answer of 300 MB, without a Content-Length: only reading it shows how long it is.
      response.writeHead(200, { 'content-type': 'application/json' })
      poured = pour(response, '{"id":"c","object":"chat.completion","created":0,"model":"huge","choices":[{"index":0,"message":{"role":"assistant","content":"', Buffer.alloc(64 * 1024, 97), replyBytes)
    })
    models.listen(0, '127.0.0.1')
    await once(models, 'listening')
    const port = (models.address() as AddressInfo).port
    cp = await startControlPlane({ LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex'), OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' }, { outboundLookup: lookup })
    ws = await seedWorkspace(cp.db, 'Acme')
    // The team key sets up and runs what spends (a project key may not).
    const created = await cp.app.inject({ method: 'POST', url: `/api/llm-connections?project_id=${ws.projectId}`, headers: { 'x-api-key': ws.teamKey }, payload: { name: 'models', provider: 'openai', baseUrl: `http://moving.test:${port}/v1`, apiKey: 'sk-0123456789' } })
    assert.equal(created.statusCode, 201, created.body)
    connectionId = created.json().id
  })
  after(async () => {
    await cp?.close()
    models?.closeAllConnections()
    models?.close()
  })

  it('fails a run whose reply passes the bound, keeps its trace, and gives the memory back', async () => {
    // Warm: the first run imports the openai and undici packages.
    assert.equal((await run({ model: 'small' })).json().output, 'Short.')
    gc()
    const baseline = process.memoryUsage.rss()
    let peak = baseline
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5)
    const response = await run({ model: 'huge' })
    clearInterval(sampler)
    await poured?.closed
    assert.equal(response.statusCode, 200, response.body.slice(0, 500))
    const result = response.json()
    const error = 'the model answered too much: the reply is larger than OUTBOUND_MAX_RESPONSE_BYTES (10485760 bytes) and was cut there'
    assert.deepEqual([result.error, result.output, result.inputTokens], [error, '', null])
    assert.ok((poured?.written() ?? replyBytes) < replyBytes / 4, `the model wrote ${poured?.written()} bytes before its connection was closed`)
    const [span] = await findTraceSpans(cp.db, ws.projectId, result.traceId)
    assert.deepEqual([span?.name, span?.status], ['playground', { code: 2, message: error }])
    await new Promise((resolve) => setTimeout(resolve, 200))
    gc()
    const afterwards = process.memoryUsage.rss()
    const figures = `baseline ${Math.round(baseline / MiB)} MiB, peak ${Math.round(peak / MiB)} MiB, afterwards ${Math.round(afterwards / MiB)} MiB`
    // Bounds well above what a run grows (V8 keeps some of the pages it grew):
    // docs/benchmarks.md#figures-behind-code-comments-2026-12-06.
    assert.ok(peak - baseline < 120 * MiB, figures)
    assert.ok(afterwards - baseline < 64 * MiB, figures)
  })

  it('fails a streamed run at the bound the same way, its events ending with the failure', async () => {
    const response = await run({ model: 'huge', stream: true })
    await poured?.closed
    const events = response.body.split('\n\n').filter((chunk) => chunk.startsWith('data: ')).map((chunk) => JSON.parse(chunk.slice(6)))
    const done = events.at(-1)
    assert.deepEqual([done.type, done.error], ['done', 'the model answered too much: the reply is larger than OUTBOUND_MAX_RESPONSE_BYTES (10485760 bytes) and was cut there'])
    assert.ok(events.filter((event) => event.type === 'text').length > 0)
    const [span] = await findTraceSpans(cp.db, ws.projectId, done.traceId)
    assert.equal(span?.status.code, 2)
  })

  it('fails a run when the connection’s name resolves to a refused address after it was saved', async () => {
    movingAddress = '192.168.4.4'
    // A pooled connection goes to the address checked when it was made: only a new one looks up.
    models.closeIdleConnections()
    try {
      const response = await run({ model: 'small' })
      const result = response.json()
      const error = 'the model could not be called: moving.test resolves to 192.168.4.4, a private address (RFC 1918); allow it with OUTBOUND_ALLOW_CIDRS'
      assert.deepEqual([response.statusCode, result.error], [200, error])
      const [span] = await findTraceSpans(cp.db, ws.projectId, result.traceId)
      assert.deepEqual(span?.status, { code: 2, message: error })
    } finally {
      movingAddress = '127.0.0.1'
    }
  })
})
