// npm run bench:hostile — does one adversary's body hurt everyone else?
//
// `node apps/ingest/src/server.ts` as a child process with its default limits. Four connections
// send, back to back, bodies that are ~66 KB gzipped and 48 MB inflated, while one client polls
// /healthz every 10 ms; the same poll against the idle server first is the baseline.
//
//   malformed   an array of long strings that turns malformed at its last character
//   dense       valid JSON of the wrong shape, `{"resourceSpans":[{"scopeSpans":[1,1,1,…]}]}`
//
// Then bodies the limits accept but that cost the most to decode: Langtrace arrays of 3,500 spans
// with 128 attributes each (~470,000 JSON values, ~11 MB), five per connection, while another
// client sends one-span traces back to back; once with the default DECODE_THREADS and once with 0
// (every body decoded on the main thread), the other client's p99 compared.
//
// Targets (docs/benchmarks.md): every hostile body gets its 4xx in ≤ 1 s; /healthz p99 ≤ 100 ms
// meanwhile; the other client's p99 ≤ 100 ms while the heavy valid bodies are decoded.
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
const targets = { rejectMs: 1_000, healthP99Ms: 100, otherClientP99Ms: 100 }
const heavyBodiesPerConnection = 5
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

/** A Langtrace array the limits accept but that costs the most to decode: many spans with OTel's 128 attributes each. */
function heavyValidBody(): Buffer {
  const attributes = Object.fromEntries(Array.from({ length: 128 }, (_, i) => [`attribute.${i}`, `value ${i}`]))
  const spans = Array.from({ length: 3_500 }, (_, i) => ({
    traceId: randomUUID().replaceAll('-', ''),
    spanId: (i + 1).toString(16).padStart(16, '0'),
    name: 'openai.chat.completions.create',
    kind: 2,
    startTime: [1795316906, 0],
    endTime: [1795316907, 0],
    attributes,
    status: { code: 0 },
  }))
  return gzipped(JSON.stringify(spans))
}

/** `connections` clients each sending `body` `times` times, and one other client sending one-span traces until they are done: the other client's latencies. */
async function otherClientDuring(baseUrl: string, key: string, body: Buffer, times: number): Promise<{ heavy: number[]; other: number[]; otherFailed: number }> {
  const heavy: number[] = []
  const sender = async () => {
    for (let i = 0; i < times; i++) {
      const started = performance.now()
      const response = await fetch(`${baseUrl}/api/trace`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body })
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`a heavy valid body got ${response.status}`)
      heavy.push(performance.now() - started)
    }
  }
  let done = false
  const sending = Promise.all(Array.from({ length: connections }, sender)).finally(() => (done = true))
  const other: number[] = []
  let otherFailed = 0
  while (!done) {
    const started = performance.now()
    const body = JSON.stringify([{ traceId: randomUUID().replaceAll('-', ''), spanId: '0000000000000001', name: 'chat', kind: 2, startTime: [1795316906, 0], endTime: [1795316907, 0], attributes: {}, status: { code: 0 } }])
    const response = await fetch(`${baseUrl}/api/trace`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body })
    await response.arrayBuffer()
    if (response.status === 200) other.push(performance.now() - started)
    else otherFailed++
    await sleep(healthPollMs)
  }
  await sending
  return { heavy, other, otherFailed }
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
    await stopChild(ingest)

    // Valid bodies at the limits, decoded off the main thread (the default) and on it.
    const heavy = heavyValidBody()
    for (const threads of ['2', '0']) {
      ingest = await startService('apps/ingest/src/server.ts', { DATABASE_URL: database.url, REDIS_URL, QUEUE_PREFIX: prefix, DECODE_THREADS: threads }, port)
      const { heavy: heavyMs, other, otherFailed } = await otherClientDuring(baseUrl, key, heavy, heavyBodiesPerConnection)
      await discardQueue(queue, redis, prefix)
      const otherP99 = percentile(other, 99)
      const met = otherP99 <= targets.otherClientP99Ms && otherFailed === 0
      if (threads !== '0') pass &&= met
      out('')
      out(`valid heavy bodies, DECODE_THREADS=${threads}: ${(heavy.length / 1024).toFixed(0)} KiB gzipped, ${connections}×${heavyBodiesPerConnection} sent, each answered 200 in p50 ${ms(percentile(heavyMs, 50))}, max ${ms(Math.max(...heavyMs))}`)
      out(`  another client's one-span traces: p50 ${ms(percentile(other, 50))}, p99 ${ms(otherP99)}, max ${ms(Math.max(...other))} over ${other.length} (${otherFailed} not 200) (target ≤ ${targets.otherClientP99Ms} ms)  ${threads === '0' ? '(baseline: decoded on the main thread)' : verdict(met)}`)
      await stopChild(ingest)
    }
    ingest = undefined
    out('')
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
