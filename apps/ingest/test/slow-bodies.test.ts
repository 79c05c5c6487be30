import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { seedBody } from './support/fixtures.ts'
import { startIngest, type IngestHarness } from './support/ingest-harness.ts'

// A client that sends its body a byte at a time (slowloris) must not hold a connection open for
// longer than BODY_TIMEOUT_MS: it is answered 408 and disconnected, while other clients are served.

interface SlowClient {
  socket: Socket
  /** Everything the server sent, once it closed the connection. */
  answer: Promise<{ text: string; afterMs: number }>
}

function slowClient(port: number, projectKey: string): SlowClient {
  const socket = connect({ port, host: '127.0.0.1' })
  const started = performance.now()
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  socket.on('error', () => {})
  const trickle = setInterval(() => {
    if (socket.writable) socket.write('[')
  }, 200)
  socket.write(`POST /api/trace HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-api-key: ${projectKey}\r\nContent-Length: 1048576\r\n\r\n`)
  const answer = once(socket, 'close').then(() => {
    clearInterval(trickle)
    return { text: Buffer.concat(chunks).toString('utf8'), afterMs: performance.now() - started }
  })
  return { socket, answer }
}

describe('a body sent too slowly', () => {
  let ingest: IngestHarness
  let port: number

  before(async () => {
    ingest = await startIngest({ BODY_TIMEOUT_MS: '1000' })
    await ingest.app.listen({ port: 0, host: '127.0.0.1' })
    port = (ingest.app.server.address() as AddressInfo).port
  })
  after(async () => {
    await ingest.queue.close()
    await ingest.close()
  })

  it('is answered 408 naming BODY_TIMEOUT_MS and disconnected, while others are served', async () => {
    const clients = Array.from({ length: 20 }, () => slowClient(port, ingest.tenant.projectKey))
    // Another client meanwhile gets its answer at once.
    const response = await fetch(`http://127.0.0.1:${port}/api/trace`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ingest.tenant.projectKey },
      body: seedBody,
    })
    assert.equal(response.status, 200)
    for (const client of clients) {
      const { text, afterMs } = await client.answer
      const [head, body] = text.split('\r\n\r\n')
      assert.match(head ?? '', /^HTTP\/1\.1 408 Request Timeout\r\n/)
      assert.match(head ?? '', /\r\nConnection: close/i)
      assert.deepEqual(JSON.parse(body ?? ''), { message: 'request: not received within 1000 ms (BODY_TIMEOUT_MS); send it faster or in smaller parts' })
      // The timeout, plus at most the one-second interval at which Node checks connections.
      assert.ok(afterMs >= 900 && afterMs < 3_500, `closed after ${afterMs} ms`)
    }
  })
})
