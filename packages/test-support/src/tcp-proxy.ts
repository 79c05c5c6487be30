import { once } from 'node:events'
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net'

/** A TCP proxy in front of a server, whose connections a fault test cuts at will. */
export interface TcpProxy {
  /** The port to connect to instead of the target's. */
  readonly port: number
  /** Connections open through the proxy now. */
  readonly connections: number
  /**
   * Cuts each open connection with probability `fraction` (both sides reset at once, as a
   * dropped network path or a killed peer does), and returns how many were cut.
   */
  cut(fraction: number, random?: () => number): number
  /** While down, every connection is cut and new ones are reset at once, as if the target were gone. */
  setDown(down: boolean): void
  close(): Promise<void>
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>()
  let down = false
  const cut = (fraction: number, random: () => number = Math.random) => {
    let count = 0
    for (const pair of [...pairs]) {
      if (random() >= fraction) continue
      pairs.delete(pair)
      for (const socket of pair) socket.resetAndDestroy()
      count++
    }
    return count
  }
  const server = createServer((client) => {
    if (down) {
      client.on('error', () => {})
      client.resetAndDestroy()
      return
    }
    const upstream = createConnection(target)
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    for (const socket of pair) {
      socket.on('error', end)
      socket.on('close', end)
    }
    client.pipe(upstream)
    upstream.pipe(client)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return pairs.size
    },
    cut,
    setDown(value) {
      down = value
      if (down) cut(1)
    },
    async close() {
      for (const pair of pairs) for (const socket of pair) socket.destroy()
      pairs.clear()
      server.close()
      await once(server, 'close')
    },
  }
}
