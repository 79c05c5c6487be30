// The summariser's fold of one-span traces (npm run bench:fold; not in CI): TRACES traces (default
// 20,000) of one LLM span each are stored through the writer's storeSpans, in batches of 20 as
// ingest groups one-span requests, and then folded into their summaries; the fold is timed alone.
// Twice, alternating: once without sessions (the baseline) and once with sessions of four traces
// each, as a chat application sends them: many conversations at once, so a session's turns come
// minutes apart, in different folds, and every fold rewrites sessions already stored. The figure
// is what sessions add to a trace's fold (target: at most 1.5 times the baseline). Against a
// database of its own on the test Postgres. Beside each fold's time, the CPU it cost a trace:
// Postgres's (every postgres process, read from /proc: the Postgres must run on this machine) and
// this process's (the fold's JavaScript, as the summariser's thread runs it).
import { performance } from 'node:perf_hooks'
import { randomBytes } from 'node:crypto'
import type { SpanInsert } from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { serverCpuSeconds } from './process-stats.ts'

const traces = Number(process.env.TRACES ?? 20_000)
const rounds = Number(process.env.ROUNDS ?? 2)
const batchSize = 20

function oneSpanTrace(index: number, withSession: boolean): SpanInsert {
  const start = BigInt(Date.now()) * 1_000_000n + BigInt(index) * 1000n
  return {
    projectId: 'bench', traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), parentSpanId: null, name: 'openai.chat', kind: 3,
    startTimeUnixNano: String(start), endTimeUnixNano: String(start + 800_000_000n), durationNs: '800000000', traceState: null, statusCode: 0,
    statusMessage: null, serviceName: 'chat-app', serviceVersion: null, scopeName: null, scopeVersion: null, llmVendor: 'openai', llmModel: 'gpt-4o-mini',
    llmRequestType: 'chat', inputTokens: 57, outputTokens: 31, totalTokens: 88, totalCostUsd: 0.0000271, sessionId: withSession ? `chat-${index % (traces / 4)}` : null,
    userId: `user-${index % 100}`, attributes: { 'llm.prompts': { stringValue: `Where is order #${10_000 + index}?` } }, resourceAttributes: {}, events: [], links: [],
  } as SpanInsert
}

/** A fold's µs a trace: its time, Postgres's CPU and this process's CPU. */
interface FoldCost {
  wall: number
  postgres: number
  node: number
}

/** What folding the traces cost a trace, in a database of its own. */
async function foldMicrosPerTrace(withSession: boolean): Promise<FoldCost> {
  const { db, drop } = await createTestDatabase()
  try {
    for (let at = 0; at < traces; at += batchSize) {
      await storeSpans(db, Array.from({ length: Math.min(batchSize, traces - at) }, (_, i) => oneSpanTrace(at + i, withSession)))
    }
    const postgresBefore = serverCpuSeconds('postgres')
    const nodeBefore = process.cpuUsage()
    const started = performance.now()
    const folded = await summariseAll(db)
    if (folded !== traces) throw new Error(`folded ${folded} traces of ${traces}`)
    const node = process.cpuUsage(nodeBefore)
    return {
      wall: ((performance.now() - started) * 1000) / traces,
      postgres: ((serverCpuSeconds('postgres') - postgresBefore) * 1_000_000) / traces,
      node: (node.user + node.system) / traces,
    }
  } finally {
    await drop()
  }
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const ratios: number[] = []
for (let round = 1; round <= rounds; round++) {
  const without = await foldMicrosPerTrace(false)
  const withSessions = await foldMicrosPerTrace(true)
  ratios.push(withSessions.wall / without.wall)
  const cost = (fold: FoldCost) => `${fmt(fold.wall)} us a trace (CPU: Postgres ${fmt(fold.postgres)}, fold ${fmt(fold.node)})`
  process.stdout.write(`round ${round}: ${fmt(traces)} one-span traces, fold ${cost(without)} without sessions, ${cost(withSessions)} with sessions of 4 traces: ${fmt(withSessions.wall / without.wall, 2)}x\n`)
}
const worst = Math.max(...ratios)
process.stdout.write(`\nsessions' cost in the fold (worst round): ${fmt(worst, 2)}x  target <= 1.50  ${worst <= 1.5 ? 'PASS' : 'FAIL'}\n`)
