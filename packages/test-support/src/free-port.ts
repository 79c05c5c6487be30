import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

// A port handed to another process is free only until that process binds it. The kernel's own
// choice (listen on port 0) comes from the ephemeral range, which every outgoing connection and
// every other test's listen(0) also draws from: under a parallel CI run, a container once found
// its port taken by another test's server between our check and its listen. Ports below the
// ephemeral range are never handed out by the kernel, so only another freePort call could take
// one, and it picks at random among thousands. From 20000 up: the Redis Clusters the tests start
// take fixed ports near 7000 and their cluster bus ports 10000 above those.
const lowestPort = 20_000

function ephemeralRangeStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    return Number.isInteger(start) && start > lowestPort + 2_000 ? start : 32_768
  } catch {
    return 32_768 // Linux's default, also what other systems' ranges sit above
  }
}

const rangeEnd = ephemeralRangeStart()

function listensOn(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(false) : reject(error)))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A TCP port on loopback that nothing listens on right now, outside the kernel's ephemeral range. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = lowestPort + Math.floor(Math.random() * (rangeEnd - lowestPort))
    if (await listensOn(port)) return port
  }
  throw new Error(`no free port between ${lowestPort} and ${rangeEnd} after 100 tries`)
}
