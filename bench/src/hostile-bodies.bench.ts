// npm run bench:hostile — does one adversary's body hurt everyone else?
//
// `node apps/ingest/src/server.ts` as a child process with its default limits. Four connections
// send, back to back, bodies that are ~66 KB gzipped and 48 MB inflated, while one client polls
// /healthz every 10 ms; the same poll against the idle server first is the baseline.
//
//   malformed   an array of long strings that turns malformed at its last character
//   dense       valid JSON of the wrong shape, `{"resourceSpans":[{"scopeSpans":[1,1,1,…]}]}`
//
// Targets (docs/benchmarks.md): every such body gets its 4xx in ≤ 1 s; /healthz p99 ≤ 100 ms meanwhile.
// Runs ~1 minute and cleans up after itself (child, database, queue).
import { type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { displayPrefix, generateApiKey, hashApiKey } from '@tracewell/auth'
import { testEnvironment } from '@tracewell/config'
import { createProject, createTeam, insertApiKey } from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import { QueueNames } from '@tracewell/queue'
import { denseJson, gzipped, malformedStringsJson } from '@tracewell/test-support'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { freePort, startService, stopChild } from './child-processes.ts'
import { discardQueue } from './discard-queue.ts'
import { peakRssMiB } from './process-stats.ts'
import { percentile } from './statistics.ts'

const inflatedBytes = 48 * 1024 * 1024
const connections = 4
const phaseSeconds = 10
const baselineSeconds = 3
const healthPollMs = 10
const targets = { rejectMs: 1_000, healthP99Ms: 100 }
const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL')
const out = (line: string) => process.stdout.write(`${line}\n`)
const ms = (value: number) => `${value.toFixed(0)} ms`

/** Polls /healthz until `until` resolves: the latency of each answer (a failed poll counts as Infinity). */
async function pollHealth(baseUrl: string, until: Promise<unknown>): Promise<number[]> {
  let done = false
  void until.finally(() => {
    done = true
  })
  const latencies: number[] = []
  while (!done) {
    const started = performance.now()
    const response = await fetch(`${baseUrl}/healthz`).catch(() => undefined)
    await response?.arrayBuffer()
    latencies.push(response?.status === 200 ? performance.now() - started : Number.POSITIVE_INFINITY)
    await sleep(healthPollMs)
  }
  return latencies
}

/** `connections` clients each sending `body` back to back for `seconds`: each answer's status and latency. */
async function sendHostile(url: string, key: string, body: Buffer, seconds: number): Promise<Array<{ status: number; ms: number }>> {
  const deadline = Date.now() + seconds * 1000
  const answers: Array<{ status: number; ms: number }> = []
  const client = async () => {
    while (Date.now() < deadline) {
      const started = performance.now()
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body,
      })
      await response.arrayBuffer()
      answers.push({ status: response.status, ms: performance.now() - started })
    }
  }
  await Promise.all(Array.from({ length: connections }, client))
  return answers
}

async function main(): Promise<void> {
  const { REDIS_URL } = testEnvironment()
  const database = await createTestDatabase()
  const prefix = `bench-hostile-${randomUUID()}`
  const queue = new Queue(QueueNames.spanBatches, { connection: { url: REDIS_URL }, prefix })
  const redis = new Redis(REDIS_URL)
  let ingest: ChildProcess | undefined
  try {
    const team = await createTeam(database.db, { name: 'bench-hostile' })
    const project = await createProject(database.db, { teamId: team.id, name: 'bench-hostile' })
    const key = generateApiKey('project')
    await insertApiKey(database.db, { kind: 'project', teamId: team.id, projectId: project.id, keyHash: hashApiKey(key), prefix: displayPrefix(key) })

    const bodies = {
      malformed: gzipped(malformedStringsJson(inflatedBytes).text),
      dense: gzipped(`{"resourceSpans":[{"scopeSpans":${denseJson(inflatedBytes - 40)}}]}`),
    }
    const port = await freePort()
    ingest = await startService('apps/ingest/src/server.ts', { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: prefix }, port)
    const baseUrl = `http://127.0.0.1:${port}`

    const idle = await pollHealth(baseUrl, sleep(baselineSeconds * 1000))
    out(`/healthz idle: p50 ${ms(percentile(idle, 50))}, p99 ${ms(percentile(idle, 99))} (${idle.length} polls)`)

    let pass = true
    for (const [name, body] of Object.entries(bodies)) {
      const sending = sendHostile(`${baseUrl}/api/trace`, key, body, phaseSeconds)
      const health = await pollHealth(baseUrl, sending)
      const answers = await sending
      const latencies = answers.map((answer) => answer.ms)
      const statuses = [...new Set(answers.map((answer) => answer.status))].join(', ')
      const slowest = Math.max(...latencies)
      const healthP99 = percentile(health, 99)
      const all4xx = answers.every((answer) => answer.status >= 400 && answer.status < 500)
      pass &&= all4xx && slowest <= targets.rejectMs && healthP99 <= targets.healthP99Ms
      out('')
      out(`${name}: ${(body.length / 1024).toFixed(0)} KiB gzipped, ${inflatedBytes / 1024 / 1024} MiB inflated; ${answers.length} answers from ${connections} connections, status ${statuses}`)
      out(`  4xx latency:   p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}, max ${ms(slowest)} (target ≤ ${targets.rejectMs} ms)  ${verdict(all4xx && slowest <= targets.rejectMs)}`)
      out(`  /healthz:      p50 ${ms(percentile(health, 50))}, p99 ${ms(healthP99)} (target ≤ ${targets.healthP99Ms} ms; idle p99 ${ms(percentile(idle, 99))})  ${verdict(healthP99 <= targets.healthP99Ms)}`)
    }
    out('')
    out(`peak RSS ingest: ${peakRssMiB(ingest.pid as number).toFixed(0)} MiB`)
    out(`overall: ${verdict(pass)}`)
  } finally {
    if (ingest) await stopChild(ingest)
    await discardQueue(queue, redis, prefix).catch(() => {})
    await queue.close()
    await redis.quit()
    await database.drop()
  }
}

await main()
