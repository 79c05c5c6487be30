import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, describe, it } from 'node:test'
import { BaseUrlError, createOutbound, OutboundRefusedError, OutboundTimeoutError, ResponseTooLargeError, type HostLookup, type Outbound } from '../src/index.ts'

// The outbound client against real local servers: what it refuses before connecting, that it
// connects to the address it checked, that it follows no redirect, and that it bounds a call's
// time and its reply's size.

interface Local {
  server: Server
  port: number
  /** Local addresses the server's connections came in on. */
  seen: string[]
}

const servers: Server[] = []
const outbounds: Outbound[] = []

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<Local> {
  const seen: string[] = []
  const server = createServer((request, response) => {
    seen.push(request.socket.localAddress ?? '')
    handler(request, response)
  })
  servers.push(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { server, port: (server.address() as AddressInfo).port, seen }
}

function outbound(options: { allowCidrs?: string; maxResponseBytes?: number; lookup?: HostLookup } = {}): Outbound {
  const made = createOutbound({ allowCidrs: options.allowCidrs ?? '', maxResponseBytes: options.maxResponseBytes ?? 10 * 1024 * 1024, connectTimeoutMs: 2_000, ...(options.lookup ? { lookup: options.lookup } : {}) })
  outbounds.push(made)
  return made
}

after(async () => {
  for (const made of outbounds) await made.close()
  for (const server of servers) {
    server.closeAllConnections()
    server.close()
  }
})

describe('the outbound client', { timeout: 60_000 }, () => {
  it('refuses a loopback address, literal or resolved, before connecting', async () => {
    const local = await serve((_, response) => response.end('inside'))
    const fetch = outbound().fetchWithin(5_000)
    await assert.rejects(fetch(`http://127.0.0.1:${local.port}/`), (error: unknown) => {
      assert.ok(error instanceof OutboundRefusedError)
      assert.equal(error.message, '127.0.0.1 is a loopback address; allow it with OUTBOUND_ALLOW_CIDRS')
      return true
    })
    await assert.rejects(fetch(`http://localhost:${local.port}/`), { name: 'OutboundRefusedError', message: /^localhost resolves to (127\.0\.0\.1|::1), a loopback address; allow it with OUTBOUND_ALLOW_CIDRS$/ })
    await assert.rejects(fetch(`http://[::ffff:127.0.0.1]:${local.port}/`), { message: '::ffff:7f00:1 is an IPv4-mapped address of 127.0.0.1, a loopback address; allow it with OUTBOUND_ALLOW_CIDRS' })
    assert.deepEqual(local.seen, [])
  })

  it('reaches what OUTBOUND_ALLOW_CIDRS allows, and nothing beside it', async () => {
    const local = await serve((_, response) => response.end('inside'))
    const fetch = outbound({ allowCidrs: '127.0.0.1/32' }).fetchWithin(5_000)
    const response = await fetch(`http://127.0.0.1:${local.port}/`)
    assert.deepEqual([response.status, await response.text()], [200, 'inside'])
    await assert.rejects(fetch(`http://127.0.0.2:${local.port}/`), { message: '127.0.0.2 is a loopback address; allow it with OUTBOUND_ALLOW_CIDRS' })
  })

  it('connects to the address it checked: a name that resolves elsewhere the second time is looked up once', async () => {
    const local = await serve((_, response) => response.end('checked'))
    const answers = [[{ address: '127.0.0.1', family: 4 }], [{ address: '127.0.0.2', family: 4 }]]
    let lookups = 0
    const lookup: HostLookup = async () => answers[Math.min(lookups++, 1)] ?? []
    const fetch = outbound({ allowCidrs: '127.0.0.1/32', lookup }).fetchWithin(5_000)
    const response = await fetch(`http://model.test:${local.port}/v1/models`)
    assert.deepEqual([response.status, await response.text(), lookups, local.seen], [200, 'checked', 1, ['127.0.0.1']])
  })

  it('tries each checked address of a name, as sockets do, without looking it up again', async () => {
    const local = await serve((_, response) => response.end('second'))
    let lookups = 0
    // Nothing listens on 127.0.0.2: the socket moves on to the next checked address.
    const lookup: HostLookup = async () => (lookups++, [{ address: '127.0.0.2', family: 4 }, { address: '127.0.0.1', family: 4 }])
    const fetch = outbound({ allowCidrs: '127.0.0.0/8', lookup }).fetchWithin(5_000)
    const response = await fetch(`http://two.test:${local.port}/`)
    assert.deepEqual([response.status, await response.text(), lookups, local.seen], [200, 'second', 1, ['127.0.0.1']])
  })

  it('refuses a call when the name resolves differently later than when its base URL was saved', async () => {
    const local = await serve((_, response) => response.end('never'))
    let lookups = 0
    const lookup: HostLookup = async () => [{ address: lookups++ === 0 ? '127.0.0.1' : '10.1.2.3', family: 4 }]
    const guard = outbound({ allowCidrs: '127.0.0.1/32', lookup })
    assert.equal(await guard.checkBaseUrl(`http://model.test:${local.port}/v1/`), `http://model.test:${local.port}/v1`)
    await assert.rejects(guard.fetchWithin(5_000)(`http://model.test:${local.port}/v1/chat/completions`, { method: 'POST', body: '{}' }), {
      name: 'OutboundRefusedError',
      message: 'model.test resolves to 10.1.2.3, a private address (RFC 1918); allow it with OUTBOUND_ALLOW_CIDRS',
    })
    assert.deepEqual(local.seen, [])
  })

  it('refuses a name when any of its addresses is refused', async () => {
    const lookup: HostLookup = async () => [{ address: '93.184.215.14', family: 4 }, { address: '169.254.169.254', family: 4 }]
    await assert.rejects(outbound({ lookup }).fetchWithin(5_000)('http://two-faced.test/'), { message: 'two-faced.test resolves to 169.254.169.254, a cloud metadata address; allow it with OUTBOUND_ALLOW_CIDRS' })
  })

  it('follows no redirect: a 3xx is the answer', async () => {
    const elsewhere = await serve((_, response) => response.end('elsewhere'))
    const local = await serve((_, response) => response.writeHead(302, { location: `http://127.0.0.1:${elsewhere.port}/` }).end())
    const fetch = outbound({ allowCidrs: '127.0.0.1/32' }).fetchWithin(5_000)
    const response = await fetch(`http://127.0.0.1:${local.port}/v1/models`)
    assert.equal(response.status, 302)
    assert.deepEqual(elsewhere.seen, [])
  })

  it('times a call out whole: a server that never answers, and one that stops mid-reply', async () => {
    const silent = await serve(() => undefined)
    const stalling = await serve((_, response) => response.writeHead(200, { 'content-type': 'text/plain' }).write('the start, then nothing'))
    const fetch = outbound({ allowCidrs: '127.0.0.1/32' }).fetchWithin(400)
    const started = performance.now()
    await assert.rejects(fetch(`http://127.0.0.1:${silent.port}/`), (error: unknown) => error instanceof OutboundTimeoutError && error.message === 'no complete reply within 400 ms')
    assert.ok(performance.now() - started < 2_000)
    const response = await fetch(`http://127.0.0.1:${stalling.port}/`)
    await assert.rejects(response.text(), (error: unknown) => error instanceof OutboundTimeoutError)
  })

  it('cuts a streamed reply at the bound and closes its connection', async () => {
    const total = 64 * 1024 * 1024
    let written = 0
    let closed: Promise<unknown> = Promise.resolve()
    const local = await serve((_, response) => {
      closed = once(response, 'close')
      response.writeHead(200, { 'content-type': 'application/octet-stream' })
      const chunk = Buffer.alloc(64 * 1024, 120)
      const pump = () => {
        while (written < total && !response.destroyed) {
          written += chunk.length
          if (!response.write(chunk)) return void response.once('drain', pump)
        }
        if (written >= total) response.end()
      }
      pump()
    })
    const fetch = outbound({ allowCidrs: '127.0.0.1/32', maxResponseBytes: 1024 * 1024 }).fetchWithin(30_000)
    const response = await fetch(`http://127.0.0.1:${local.port}/`)
    await assert.rejects(response.arrayBuffer(), (error: unknown) => {
      assert.ok(error instanceof ResponseTooLargeError)
      assert.equal(error.message, 'the reply is larger than OUTBOUND_MAX_RESPONSE_BYTES (1048576 bytes) and was cut there')
      return true
    })
    await closed
    assert.ok(written < total / 4, `the server wrote ${written} bytes before the connection closed`)
  })

  it('refuses a reply whose declared length is over the bound without reading it', async () => {
    const local = await serve((_, response) => response.writeHead(200, { 'content-length': String(2 * 1024 * 1024) }).end(Buffer.alloc(2 * 1024 * 1024)))
    const fetch = outbound({ allowCidrs: '127.0.0.1/32', maxResponseBytes: 1024 * 1024 }).fetchWithin(5_000)
    await assert.rejects(fetch(`http://127.0.0.1:${local.port}/`), ResponseTooLargeError)
  })

  it('checks a base URL as it is saved: shape, then its host', async () => {
    const lookup: HostLookup = async (host) => (host === 'api.example.test' ? [{ address: '93.184.215.14', family: 4 }] : [{ address: '10.1.2.3', family: 4 }])
    const guard = outbound({ lookup })
    assert.equal(await guard.checkBaseUrl('https://API.example.test/v1//'), 'https://api.example.test/v1')
    assert.equal(await guard.checkBaseUrl('https://api.example.test:8443'), 'https://api.example.test:8443')
    const refusals: Array<[string, string]> = [
      ['https://inside.test/v1', 'inside.test resolves to 10.1.2.3, a private address (RFC 1918); allow it with OUTBOUND_ALLOW_CIDRS'],
      ['http://169.254.169.254/latest', '169.254.169.254 is a cloud metadata address; allow it with OUTBOUND_ALLOW_CIDRS'],
      ['http://[::1]:8080/v1', '::1 is a loopback address; allow it with OUTBOUND_ALLOW_CIDRS'],
      ['https://api.example.test/v1?x=1', 'must not have a query (?…): Tracewell appends the path of each call itself'],
      ['https://api.example.test/admin?', 'must not have a query (?…): Tracewell appends the path of each call itself'],
      ['https://api.example.test/admin#', 'must not have a fragment (#…): Tracewell appends the path of each call itself'],
      ['https://user:pw@api.example.test/v1', 'must not hold credentials; send the key as apiKey'],
      ['ftp://api.example.test', 'must be http:// or https://, got ftp:'],
      ['not a url', 'not a URL: "not a url"'],
    ]
    for (const [url, message] of refusals) await assert.rejects(guard.checkBaseUrl(url), (error: unknown) => error instanceof BaseUrlError && error.message === message, url)
  })
})
