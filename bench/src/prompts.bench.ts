// npm run bench:prompts — the cached GET /api/promptset with variables against a bare Fastify
// route returning a constant JSON body of the same size, in one run on this machine.
//
// Targets (docs/benchmarks.md): requests/s ≥ 0.7 × the bare route; p99 ≤ 10 ms at half the maximum rate.
// That p99 comes from autocannon's `overallRate`, which sends each connection's share of a second
// at the top of the second: a burst at full speed, harsher than an even pace. bench:ingest paces
// its ~200 requests/s evenly (paced-load.ts), but at ~14k requests/s no Node generator holds an
// even schedule on this 2-core machine: paced at that rate, even the bare route measured p99 85 ms.
// Each server runs in a child process of its own (this script re-runs itself with `serve …`), so
// the load generator here does not share its event loop. Postgres is the local one, in a fresh
// database dropped at the end. Runs ~45 s.
import type { ChildProcess } from 'node:child_process'
import autocannon from 'autocannon'
import { displayPrefix, generateApiKey, hashApiKey } from '@tracewell/auth'
import { ControlPlaneConfigSchema, loadConfig } from '@tracewell/config'
import { buildApp } from '@tracewell/control-plane'
import { createProject, createPromptset, createPromptVersion, createTeam, insertApiKey } from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import Fastify from 'fastify'
import { announcePort, startScriptServer, stopChild } from './child-processes.ts'
import { median } from './statistics.ts'

// Rounds alternate between the two servers and the median is kept, so that a burst of other work
// on the machine does not land on one side only.
const rounds = 3
const roundSeconds = 5
const halfRateSeconds = 10
const warmupSeconds = 2
const connections = 50
const targets = { throughputRatio: 0.7, p99Ms: 10 }

// ---- child: one server, prints its port, runs until killed ----
async function serve(kind: string, arg: string): Promise<void> {
  if (kind === 'baseline') {
    const body: unknown = JSON.parse(arg)
    const app = Fastify({ logger: false })
    app.get('/baseline', async () => body)
    await app.listen({ port: 0, host: '127.0.0.1' })
    announcePort(app.server)
    return
  }
  // What an operator runs: the real app, with logging at warn (request logs off).
  const app = await buildApp(loadConfig(ControlPlaneConfigSchema, { DATABASE_URL: arg, LOG_LEVEL: 'warn' }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  announcePort(app.server)
}

interface Load {
  url: string
  headers?: Record<string, string>
  duration: number
  overallRate?: number
}

async function run(load: Load): Promise<autocannon.Result> {
  const result = await autocannon({ url: load.url, headers: load.headers ?? {}, connections, duration: load.duration, ...(load.overallRate ? { overallRate: load.overallRate } : {}) })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${load.url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return result
}

async function main(): Promise<void> {
  const database = await createTestDatabase()
  const children: ChildProcess[] = []
  try {
    const team = await createTeam(database.db, { name: 'Bench' })
    const project = await createProject(database.db, { teamId: team.id, name: 'Bench' })
    const projectKey = generateApiKey('project')
    await insertApiKey(database.db, { kind: 'project', teamId: team.id, projectId: project.id, keyHash: hashApiKey(projectKey), prefix: displayPrefix(projectKey) })
    const registry = await createPromptset(database.db, { projectId: project.id, name: 'support', description: 'Customer support assistant' })
    await createPromptVersion(database.db, {
      promptsetId: registry.id,
      value: 'You are a support agent for ${company}. Answer {{ customer }} about {topic} politely and concisely, in at most three sentences.',
      variables: ['company', 'customer', 'topic'],
      model: 'gpt-4o-mini',
      modelSettings: { temperature: 0.2, max_tokens: 256 },
      tags: ['support', 'production'],
      note: 'benchmark prompt',
      spanId: null,
      live: true,
    })

    const controlPlane = await startScriptServer(import.meta.url, ['serve', 'control-plane', database.url])
    children.push(controlPlane.child)
    const query = new URLSearchParams({ promptset_id: registry.id, 'variables.company': 'Acme & Co', 'variables.customer': 'Zoë Müller', 'variables.topic': 'refunds (100%)' })
    const promptUrl = `http://127.0.0.1:${controlPlane.port}/api/promptset?${query}`
    const headers = { 'x-api-key': projectKey }
    const sample = await fetch(promptUrl, { headers })
    if (sample.status !== 200) throw new Error(`GET /api/promptset answered ${sample.status}: ${await sample.text()}`)
    const sampleBody = await sample.text()

    const baseline = await startScriptServer(import.meta.url, ['serve', 'baseline', sampleBody])
    children.push(baseline.child)
    const baselineUrl = `http://127.0.0.1:${baseline.port}/baseline`
    const baselineSize = (await (await fetch(baselineUrl)).text()).length
    process.stdout.write(
      `response bodies: promptset ${sampleBody.length} B, baseline ${baselineSize} B; ${connections} connections; ${rounds} alternating rounds of ${roundSeconds} s\n`,
    )

    await run({ url: baselineUrl, duration: warmupSeconds })
    await run({ url: promptUrl, headers, duration: warmupSeconds })
    const bareRates: number[] = []
    const promptRates: number[] = []
    for (let round = 1; round <= rounds; round++) {
      bareRates.push((await run({ url: baselineUrl, duration: roundSeconds })).requests.average)
      promptRates.push((await run({ url: promptUrl, headers, duration: roundSeconds })).requests.average)
      process.stdout.write(`  round ${round}: bare ${bareRates.at(-1)?.toFixed(0)} req/s, promptset ${promptRates.at(-1)?.toFixed(0)} req/s\n`)
    }
    await stopChild(baseline.child)
    const bare = median(bareRates)
    const prompts = median(promptRates)
    const halfRate = Math.max(1, Math.floor(prompts / 2))
    const atHalf = await run({ url: promptUrl, headers, duration: halfRateSeconds, overallRate: halfRate })

    const ratio = prompts / bare
    const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL')
    const lines = [
      `bare Fastify route (constant JSON):       ${bare.toFixed(0)} req/s (median)`,
      `GET /api/promptset (cached, 3 variables): ${prompts.toFixed(0)} req/s (median)`,
      `throughput ratio: ${ratio.toFixed(2)} (target ≥ ${targets.throughputRatio})  ${verdict(ratio >= targets.throughputRatio)}`,
      `p99 at half the max rate (${halfRate} req/s): ${atHalf.latency.p99} ms (target ≤ ${targets.p99Ms} ms)  ${verdict(atHalf.latency.p99 <= targets.p99Ms)}`,
    ]
    process.stdout.write(`${lines.join('\n')}\n`)
  } finally {
    for (const child of children) await stopChild(child)
    await database.drop()
  }
}

if (process.argv[2] === 'serve') await serve(process.argv[3] ?? '', process.argv[4] ?? '')
else await main()
