import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, describe, it } from 'node:test'
import { createOutbound } from '@tracewell/outbound'
import { callChat, LlmCallError, type ChatCall } from '../src/index.ts'

// A model call's failures as the caller sees them: Tracewell's words and the status, never the
// endpoint's own reply (that stays in `detail`, for the log); a refused address, a redirect, a
// stalled stream each fail with their reason.

const servers: Server[] = []
const outbound = createOutbound({ allowCidrs: '127.0.0.1/32', maxResponseBytes: 1024 * 1024, connectTimeoutMs: 2_000 })

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ url: string; hits: () => number }> {
  let hits = 0
  const server = createServer((request, response) => {
    hits++
    request.resume()
    handler(request, response)
  })
  servers.push(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, hits: () => hits }
}

const call = (baseUrl: string, extra: Partial<ChatCall> = {}): Promise<unknown> =>
  callChat({ baseUrl, apiKey: 'sk-test', model: 'm', messages: [{ role: 'user', content: 'hi' }], settings: {}, timeoutMs: 5_000, outbound, ...extra })

async function failure(promise: Promise<unknown>): Promise<LlmCallError> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof LlmCallError, String(error))
    return error
  }
  assert.fail('the call did not fail')
}

after(async () => {
  await outbound.close()
  for (const server of servers) {
    server.closeAllConnections()
    server.close()
  }
})

describe('a model call’s failures', { timeout: 60_000 }, () => {
  it('say the status, keeping the endpoint’s error body for the log', async () => {
    const failing = await serve((_, response) => response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"db password is hunter2"}}'))
    const error = await failure(call(failing.url))
    assert.deepEqual([error.message, error.retryable], ['the model answered 500', true])
    assert.match(error.detail ?? '', /hunter2/)
  })

  it('say a 2xx that is no chat completion could not be read, without its body', async () => {
    const html = await serve((_, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('<html>internal admin: hunter2</html>'))
    const error = await failure(call(html.url))
    assert.equal(error.message, "the model's reply could not be read as an OpenAI-compatible answer")
    assert.ok(!error.message.includes('hunter2'))
  })

  it('follow no redirect', async () => {
    const elsewhere = await serve((_, response) => response.end('{}'))
    const redirecting = await serve((_, response) => response.writeHead(307, { location: `${elsewhere.url}/chat/completions` }).end())
    const error = await failure(call(redirecting.url))
    assert.deepEqual([error.message, error.retryable], ['the model answered 307 (a redirect, which Tracewell does not follow: save the URL it points to as the base URL)', false])
    assert.equal(elsewhere.hits(), 0)
  })

  it('refuse an address the policy refuses, for good', async () => {
    const error = await failure(call('http://10.0.0.1/v1'))
    assert.deepEqual([error.message, error.retryable], ['the model could not be called: 10.0.0.1 is a private address (RFC 1918); allow it with OUTBOUND_ALLOW_CIDRS', false])
  })

  it('time out a stream that stalls, rather than end it as if the model had finished', async () => {
    const stalling = await serve((_, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: 'Half' }, finish_reason: null }] })}\n\n`)
    })
    const pieces: string[] = []
    const error = await failure(call(stalling.url, { timeoutMs: 600, onText: (text) => pieces.push(text) }))
    assert.deepEqual([error.message, error.retryable, pieces], ['the model timed out: no complete reply within 600 ms', true, ['Half']])
  })
})
