// Latency at a steady rate, for bench:ingest's "p99 at half the maximum rate" target.
//
// autocannon's `overallRate` cannot measure that: each connection sends its whole per-second quota
// at the top of every second and then idles, so at half the maximum rate the server runs flat out
// for half a second and p99 measures that burst. Here one request is issued every 1/rate s, open
// loop: a slow answer never holds back the next request (beyond `connections` in flight, requests
// queue in the client, and that wait counts). Each is timed from when it was issued, so a pause of
// the generator itself (its GC, a late timer) is not charged to the server, while a pause of the
// server counts against every request that arrives during it.
import { setImmediate as yieldToEventLoop, setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'undici'
import { percentile } from './statistics.ts'

export interface PacedLoad {
  /** Each request is a POST of a new JSON body to this URL. */
  url: string
  headers: Record<string, string>
  body: () => string
  rate: number
  /** Measured seconds, after one more second at the same rate that is not recorded (new
   * connections, the generator's own code still cold: here that first second's tail is 30+ ms). */
  seconds: number
  /** Most connections kept open at once (requests beyond wait for one, and that wait counts). */
  connections: number
}

export interface PacedResult {
  p50: number
  p99: number
  ok: number
  failed: number
}

const warmUpSeconds = 1

export async function paced(load: PacedLoad): Promise<PacedResult> {
  const target = new URL(load.url)
  // undici's Pool rather than node:http: a fraction of the CPU per request, so the generator
  // takes less of the machine from the server it measures.
  const pool = new Pool(target.origin, { connections: load.connections })
  const path = `${target.pathname}${target.search}`
  const latencies: number[] = []
  let failed = 0
  const headers = { ...load.headers, 'content-type': 'application/json' }
  const send = async (body: Buffer, recorded: boolean) => {
    const issued = performance.now()
    try {
      const response = await pool.request({ path, method: 'POST', headers, body })
      await response.body.dump()
      if (response.statusCode !== 200) failed++
      else if (recorded) latencies.push(performance.now() - issued)
    } catch {
      failed++
    }
  }
  const unrecorded = Math.round(load.rate * warmUpSeconds)
  const total = unrecorded + Math.round(load.rate * load.seconds)
  const started = performance.now()
  const inFlight: Array<Promise<void>> = []
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / load.rate
    const wait = due - performance.now()
    if (wait > 1) await sleep(wait)
    // Behind schedule (the generator itself is busy), still let responses in every few requests,
    // or they would wait for the whole run to be sent.
    else if (i % 16 === 0) await yieldToEventLoop()
    inFlight.push(send(Buffer.from(load.body()), i >= unrecorded))
  }
  await Promise.all(inFlight)
  await pool.close()
  const at = (p: number) => Number(percentile(latencies, p).toFixed(1))
  return { p50: at(50), p99: at(99), ok: latencies.length, failed }
}
