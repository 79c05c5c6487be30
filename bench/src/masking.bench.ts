// npm run bench:masking — what masking at ingest costs, in one run on this machine: ingest
// (`node apps/ingest/src/server.ts`, a child process, HTTP → Redis) receiving the same LLM traces
// for a project without rules (the baseline) and for one with five rules (email, phone,
// credit_card, secret, and a regex), in alternating rounds. Every span's prompt holds an email and
// a phone number, so every body is masked and re-encoded: the worst case, not the common one.
//
// Target (issue 46): one-span and 100-span traces with five rules keep at least 75% of ingest's
// throughput without rules. The verdict is on the ingest process's CPU time a span (utime + stime
// from /proc), paired by round: the load generator shares this 2-core machine, and throughput
// moves with whatever else runs, CPU a span far less. Requests a second are printed beside it.
// Runs ~2 minutes and cleans up after itself (child, database, queue).
import { setTimeout as sleep } from 'node:timers/promises'
import { upsertProjectMaskingRules } from '@tracewell/db'
import { freePort, servicesRunAs, startService } from './child-processes.ts'
import { bodyFactory } from './llm-spans.ts'
import { cpuSeconds } from './process-stats.ts'
import { median } from './statistics.ts'
import { createTenant, out, run, type Measured } from './write-path-load.ts'
import { openWritePathStack } from './write-path-stack.ts'

const rounds = 5
const roundSeconds = 4
const warmupSeconds = 3
const target = 0.75

const rules = [
  { detector: 'email' },
  { detector: 'phone' },
  { detector: 'credit_card' },
  { detector: 'secret' },
  { detector: 'regex', pattern: 'ACCT-[0-9]{8}' },
]

/** The benchmarks' LLM traces with a customer's email and phone number in every user message. */
const personalBodies = (spans: number) => {
  const next = bodyFactory(spans)
  return () => next().replaceAll('Order #', 'Order for jane.doe@example.com (+1 415 555 2671) #')
}

interface Round {
  measured: Measured
  cpuMicrosPerSpan: number
}

async function main(): Promise<void> {
  const stack = await openWritePathStack('masking')
  try {
    const plain = await createTenant(stack.database.db, 'bench-no-rules')
    const masked = await createTenant(stack.database.db, 'bench-five-rules')
    await upsertProjectMaskingRules(stack.database.db, masked.projectId, rules)
    const port = await freePort()
    const ingest = await startService('apps/ingest/src/server.ts', { ...stack.ingestEnv, MASKING_RULES_REFRESH_MS: '100' }, port)
    stack.children.push(ingest)
    await sleep(500)
    const url = `http://127.0.0.1:${port}/api/trace`
    out(servicesRunAs())
    out(`rules: ${JSON.stringify(rules)}; ${rounds} alternating rounds of ${roundSeconds} s per shape`)

    /** A body the masked project queued holds no email: what is measured is masking that works. */
    const assertQueuedMasked = async () => {
      for await (const keys of stack.redis.scanStream({ match: `${stack.env.QUEUE_PREFIX}:*:payload:*`, count: 1000 }) as AsyncIterable<string[]>) {
        const key = keys.find((candidate) => !candidate.endsWith(':stored'))
        if (key === undefined) continue
        const body = Object.values(await stack.redis.hgetallBuffer(key))[0]?.toString() ?? ''
        if (body.includes('jane.doe') || !body.includes('[REDACTED:email]')) throw new Error('a queued body of the masked project was not masked')
        return
      }
      throw new Error('nothing queued for the masked project')
    }

    const measure = async (key: string, spans: number, seconds: number): Promise<Round> => {
      const before = cpuSeconds([ingest.pid as number])
      const measured = await run({ url, headers: { 'x-api-key': key }, body: personalBodies(spans), duration: seconds })
      const cpu = cpuSeconds([ingest.pid as number]) - before
      // Requests autocannon abandoned at its deadline finish after it returns; their bodies go too.
      await sleep(500)
      if (key === masked.key) await assertQueuedMasked()
      await stack.discardQueue()
      if (measured.rejected + measured.errors > 0) throw new Error(`${measured.rejected} requests refused, ${measured.errors} failed`)
      return { measured, cpuMicrosPerSpan: (cpu / (measured.ok * spans)) * 1e6 }
    }

    let pass = true
    for (const spans of [1, 100]) {
      await measure(plain.key, spans, warmupSeconds)
      await measure(masked.key, spans, warmupSeconds)
      const cpuRatios: number[] = []
      const rateRatios: number[] = []
      for (let round = 1; round <= rounds; round++) {
        const baseline = await measure(plain.key, spans, roundSeconds)
        const withRules = await measure(masked.key, spans, roundSeconds)
        cpuRatios.push(baseline.cpuMicrosPerSpan / withRules.cpuMicrosPerSpan)
        rateRatios.push(withRules.measured.requestsPerSecond / baseline.measured.requestsPerSecond)
        out(
          `  ${spans}-span traces, round ${round}: no rules ${baseline.measured.requestsPerSecond.toFixed(0)} req/s, ${baseline.cpuMicrosPerSpan.toFixed(1)} µs CPU/span; ` +
            `five rules ${withRules.measured.requestsPerSecond.toFixed(0)} req/s, ${withRules.cpuMicrosPerSpan.toFixed(1)} µs CPU/span`,
        )
      }
      const ratio = median(cpuRatios)
      pass &&= ratio >= target
      out(
        `${spans}-span traces: with five rules ingest keeps ${(ratio * 100).toFixed(0)}% of its throughput without rules by CPU a span (median of ${rounds} paired rounds; target ≥ ${target * 100}%) ${ratio >= target ? 'PASS' : 'FAIL'}; ` +
          `by requests a second ${(median(rateRatios) * 100).toFixed(0)}%`,
      )
    }

    process.exitCode = pass ? 0 : 1
  } finally {
    await stack.close()
  }
}

await main()
