// npm run bench:framework — what our replacements of framework defaults buy, measured in one run:
// the app every service starts from (createApp + metricsPlugin) against the same app with one
// choice swapped for the default. A replacement stays only while this shows it pays for itself.
//
// Compared: the request-duration histogram (request-duration.metric.ts) against prom-client's
// labelled Histogram, and randomUUID() request ids (create-app.ts) against Fastify's req-N
// counter, to show what ids unique across processes cost. (A query-string parser, a lazy
// per-request logger and a prefix+counter id generator of ours were measured the same way, were
// no cheaper, and were removed.)
//
// The figure is the server process's CPU time per request (utime + stime from /proc), not
// requests/s: the load generator shares this 2-core machine, and CPU per request moves far less
// with it than throughput does. Every server runs in a child process of its own, on one route
// shaped like the services' busy ones: a GET with a query string, request logs off (as ingest's
// trace routes run at the default level), a small JSON answer. Each round measures every variant
// once, back to back, and the comparison is paired by round (ours / default within a round), so a
// change in the machine's load between rounds cancels out. A replacement is kept when ours is
// cheaper in at least three rounds of four (the upper quartile of the ratios is below 1). Runs
// ~1.5 minutes.
import type { ChildProcess } from 'node:child_process'
import { Writable } from 'node:stream'
import autocannon from 'autocannon'
import { appServerOptions, metricsPlugin } from '@tracewell/http'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client'
import { announcePort, startScriptServer, stopChild } from './child-processes.ts'
import { cpuSeconds } from './process-stats.ts'
import { median, percentile } from './statistics.ts'

const rounds = 15
const roundSeconds = 2
const warmupSeconds = 2
const connections = 50

type Variant = 'ours' | 'default-request-ids' | 'prom-client-histogram'

const variants: Array<{ name: Variant; replaces: string; default: string }> = [
  { name: 'prom-client-histogram', replaces: 'request-duration histogram', default: "prom-client's Histogram with labels" },
  { name: 'default-request-ids', replaces: 'randomUUID() request ids', default: "Fastify's req-N counter (not unique across processes)" },
]

/** Log lines go nowhere: what is measured is the work of deciding and formatting, not a terminal. */
const sink = new Writable({ write: (_chunk, _encoding, done) => done() })

/** Our app's options with one replacement undone. */
function serverOptions(variant: Variant): FastifyServerOptions {
  const options = appServerOptions({ logLevel: 'info', logDestination: sink })
  if (variant !== 'default-request-ids') return options
  const { genReqId: _ours, ...rest } = options
  return rest
}

/** prom-client's own Histogram in place of ours, with the same buckets and labels. */
const promClientHistogramPlugin = fp(async (app: FastifyInstance) => {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const histogram = new Histogram({
    name: 'tracewell_http_request_duration_seconds',
    help: 'HTTP request duration by method, route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  })
  app.addHook('onResponse', (request, reply, done) => {
    histogram.observe({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode }, reply.elapsedTime / 1000)
    done()
  })
  app.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()))
})

// ---- child: one server, prints its port, runs until killed ----
async function serve(variant: Variant): Promise<void> {
  const app = Fastify(serverOptions(variant))
  await app.register(variant === 'prom-client-histogram' ? promClientHistogramPlugin : metricsPlugin)
  const answer = { items: [{ id: 'a1', model: 'gpt-4o-mini', cost: 0.00042 }], nextCursor: null }
  app.get('/api/traces', { logLevel: 'warn' }, async (request) => ({ ...answer, query: Object.keys(request.query as object).length }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  announcePort(app.server)
}

const query = new URLSearchParams({ project_id: 'support-bot', model: 'gpt-4o-mini', status: 'error', q: 'refund policy', limit: '50', sort: 'cost' })

async function cpuPerRequestUs(child: ChildProcess, port: number, duration: number): Promise<number> {
  const before = cpuSeconds([child.pid as number])
  const result = await autocannon({ url: `http://127.0.0.1:${port}/api/traces?${query}`, connections, duration })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return ((cpuSeconds([child.pid as number]) - before) / result.requests.total) * 1e6
}

async function main(): Promise<void> {
  const children = new Map<Variant, { child: ChildProcess; port: number }>()
  try {
    for (const variant of ['ours', ...variants.map((v) => v.name)] as Variant[]) children.set(variant, await startScriptServer(import.meta.url, ['serve', variant]))
    for (const [, server] of children) await cpuPerRequestUs(server.child, server.port, warmupSeconds)
    const samples = new Map<Variant, number[]>([...children.keys()].map((variant) => [variant, []]))
    for (let round = 1; round <= rounds; round++) {
      const line: string[] = []
      for (const [variant, server] of children) {
        const us = await cpuPerRequestUs(server.child, server.port, roundSeconds)
        samples.get(variant)?.push(us)
        line.push(`${variant} ${us.toFixed(1)}`)
      }
      process.stdout.write(`  round ${round} (µs of server CPU per request): ${line.join(', ')}\n`)
    }
    const ours = median(samples.get('ours') ?? [])
    process.stdout.write(`\nour app: ${ours.toFixed(1)} µs of server CPU per request (median of ${rounds})\n`)
    const oursByRound = samples.get('ours') ?? []
    for (const variant of variants) {
      const other = samples.get(variant.name) ?? []
      const ratios = oursByRound.map((us, round) => us / (other[round] as number))
      const [low, mid, high] = [percentile(ratios, 25), median(ratios), percentile(ratios, 75)]
      const verdict = high < 1 ? 'KEEP (pays for itself)' : low > 1 ? 'DROP (costs more than the default)' : 'no measurable difference'
      process.stdout.write(
        `${variant.replaces} vs ${variant.default}: ${median(other).toFixed(1)} µs; ours/default ${mid.toFixed(3)} (quartiles ${low.toFixed(3)}–${high.toFixed(3)})  ${verdict}\n`,
      )
    }
  } finally {
    for (const [, server] of children) await stopChild(server.child)
  }
}

if (process.argv[2] === 'serve') await serve(process.argv[3] as Variant)
else await main()
