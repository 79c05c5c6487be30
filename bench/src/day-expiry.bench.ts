// A day's expiry on the day-partitioned spans table (npm run bench:cleanup:days; part of
// npm run bench:cleanup). Measures, in one run on this machine:
//   1. the janitor's time and the WAL it writes (pg_current_wal_lsn before and after) for one
//      day's expiry of projects on the default retention (30 days), with CLEANUP_CUTOFF=day, on
//      DAYS successive days (the run's clock moved a day forward each time), nothing else writing:
//      targets ≤ 1 s and ≤ 1 MB, whatever the number of rows;
//   2. the p99 latency of back-to-back 100-span inserts (the writer's storeSpans) while each of
//      DAYS more expiries runs, as a ratio to their p99 in windows without cleanup between them
//      (target ≤ 1.2).
// Data: SPANS spans (default 10,000,000) of three projects spread evenly over 30 + 2 × DAYS days
// before now, ten spans a trace, five traces a session, with their trace and session summaries and
// usage rollups, in a partition a day (seed-llm-spans.ts). The WAL counted is the whole server's: run it against a
// Postgres of its own (TEST_DATABASE_URL), or other databases' writes are counted too.
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { testEnvironment } from '@tracewell/config'
import { storeSpans } from '@tracewell/write-path'
import { createDb, createProject, createTeam, migrateToLatest, sql, startOfUtcDay, upsertRetentionPolicy, type Db, type SpanInsert } from '@tracewell/db'
import { runRetentionCleanup } from '@tracewell/janitor'
import { buildSummaries, createDayPartitions, expirySpans, insertGeneratedSpans } from './seed-llm-spans.ts'
import { percentile } from './statistics.ts'

const totalSpans = Number(process.env.SPANS ?? 10_000_000)
const expiryDays = Number(process.env.DAYS ?? 3)
const retentionDays = 30
const ingestBatch = 100
const quietWindowMs = 1_500
const dayMs = 86_400_000

const { DATABASE_URL: adminUrl } = testEnvironment()
const database = `tracewell_bench_expiry_${randomBytes(4).toString('hex')}`
const admin = createDb({ databaseUrl: adminUrl, poolSize: 1 })
const quiet = { info() {}, warn() {}, error() {} }

const log = (line: string) => process.stdout.write(`${line}\n`)
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

function urlOf(name: string): string {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

async function walBytesSince(db: Db, lsn: string): Promise<number> {
  const { rows } = await sql<{ bytes: string }>`select pg_wal_lsn_diff(pg_current_wal_lsn(), ${lsn}::pg_lsn)::text as bytes`.execute(db)
  return Number(rows[0]?.bytes)
}

async function currentLsn(db: Db): Promise<string> {
  return (await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(db)).rows[0]?.lsn ?? '0/0'
}

let ingestSequence = 0
function ingestSpans(projectId: string): SpanInsert[] {
  const nowNanos = BigInt(Date.now()) * 1_000_000n
  const attribute = randomBytes(150).toString('hex')
  const traceId = randomBytes(16).toString('hex')
  return Array.from({ length: ingestBatch }, () => ({
    projectId, traceId, spanId: (++ingestSequence).toString(16).padStart(16, '0'), parentSpanId: null, name: 'openai.chat.completions.create', kind: 3,
    startTimeUnixNano: nowNanos.toString(), endTimeUnixNano: (nowNanos + 800_000_000n).toString(), durationNs: '800000000', traceState: null,
    statusCode: 0, statusMessage: null, serviceName: 'bench-app', serviceVersion: null, scopeName: null, scopeVersion: null, llmVendor: 'openai',
    llmModel: 'gpt-4o', llmRequestType: 'chat_completion', inputTokens: 120, outputTokens: 40, totalTokens: 160,
    attributes: { 'llm.prompts': { stringValue: attribute } }, resourceAttributes: { 'service.name': { stringValue: 'bench-app' } }, events: [], links: [],
  }))
}

async function ingestUntil(db: Db, projectId: string, done: () => boolean): Promise<number[]> {
  const latencies: number[] = []
  while (!done()) {
    const started = performance.now()
    await storeSpans(db, ingestSpans(projectId))
    latencies.push(performance.now() - started)
  }
  return latencies
}

async function main(): Promise<void> {
  await sql.raw(`create database "${database}"`).execute(admin)
  const db = createDb({ databaseUrl: urlOf(database), poolSize: 6 })
  try {
    await migrateToLatest(db)
    const team = await createTeam(db, { name: 'bench' })
    const projects: string[] = []
    for (const name of ['A', 'B', 'C']) {
      const { id } = await createProject(db, { teamId: team.id, name })
      await upsertRetentionPolicy(db, { projectId: id, enabled: true, retentionDays })
      projects.push(id)
    }
    const now = Date.now()
    const firstDay = startOfUtcDay(new Date(now - (retentionDays + 2 * expiryDays) * dayMs))
    await createDayPartitions(db, firstDay, new Date(now + 3 * dayMs))
    const seedStarted = performance.now()
    await insertGeneratedSpans(db, totalSpans, expirySpans(projects, firstDay, new Date(now), totalSpans))
    const summarising = performance.now()
    const timings = await buildSummaries(db, { textFilters: false })
    await sql`vacuum (freeze, analyze)`.execute(db)
    const { rows: [size] } = await sql<{ size: string; traces: number }>`
      select pg_size_pretty(sum(pg_total_relation_size(inhrelid))) as size, (select count(*)::int from trace_summaries) as traces
      from pg_inherits where inhparent = 'spans'::regclass`.execute(db)
    const spansPerDay = totalSpans / ((now - firstDay.getTime()) / dayMs)
    log(`seeded ${fmt(totalSpans)} spans (${fmt(size?.traces ?? 0)} traces, ~${fmt(spansPerDay)} spans a day) over ${retentionDays + 2 * expiryDays} days in ${fmt((performance.now() - seedStarted) / 1000, 0)} s `
      + `(spans ${fmt((summarising - seedStarted) / 1000, 0)} s; trace summaries ${fmt(timings.traceSummariesMs / 1000, 0)} s, usage rollups ${fmt(timings.usageRollupsMs / 1000, 0)} s, `
      + `sessions ${fmt(timings.sessionSummariesMs / 1000, 0)} s); spans ${size?.size}`)

    const quietSamples: number[] = []
    const loadedSamples: number[] = []
    const figures: Array<{ ms: number; walBytes: number; dropped: number; deleted: number; lsns: string }> = []
    // Run `day` expires the seed's day `day` (from 0): its clock is set so that the start of that
    // day's successor is the first cutoff, i.e. 30 days before the day after that.
    const expire = async (day: number) => {
      const clock = new Date(now - (2 * expiryDays - 1 - day) * dayMs)
      const outcome = await runRetentionCleanup(db, { batchSize: 10_000, timeBudgetMs: 600_000, now: clock, log: quiet, cutoffs: 'day' })
      if (!outcome.ran) throw new Error('the cleanup lock was taken')
      return outcome.report
    }
    // A first run expires nothing (the seed's first day is still within retention) and warms up.
    const warmUp = await expire(-1)
    if (warmUp.droppedPartitions.length > 0 || warmUp.deletedSpans > 0) throw new Error(`the warm-up run expired ${JSON.stringify(warmUp)}`)
    // 1. Alone: the clock a day further each round, one more day of every project past its retention.
    for (let day = 0; day < expiryDays; day++) {
      // Right after a checkpoint, so that the expiry pays the full-page images of every page it touches.
      await sql`checkpoint`.execute(db)
      const lsn = await currentLsn(db)
      const started = performance.now()
      const report = await expire(day)
      const ms = performance.now() - started
      figures.push({ ms, walBytes: await walBytesSince(db, lsn), dropped: report.droppedPartitions.length, deleted: report.deletedSpans, lsns: `${lsn}–${await currentLsn(db)}` })
    }
    // 2. With inserts: a window without cleanup, then inserts for as long as an expiry runs.
    for (let day = expiryDays; day < 2 * expiryDays; day++) {
      await sql`checkpoint`.execute(db)
      const until = performance.now() + quietWindowMs
      quietSamples.push(...(await ingestUntil(db, projects[0] as string, () => performance.now() >= until)))
      let cleaning = true
      const during = ingestUntil(db, projects[0] as string, () => !cleaning)
      await expire(day)
      cleaning = false
      loadedSamples.push(...(await during))
    }
    for (const [i, f] of figures.entries()) {
      log(`day ${i + 1}: janitor ${fmt(f.ms, 0)} ms, WAL ${fmt(f.walBytes / 1024, 0)} KB; dropped ${f.dropped} partition(s), deleted ${fmt(f.deleted)} spans row by row (WAL ${f.lsns}: pg_waldump --stats=record shows what)`)
    }
    const worstMs = Math.max(...figures.map((f) => f.ms))
    const worstWal = Math.max(...figures.map((f) => f.walBytes))
    const quietP99 = percentile(quietSamples, 99)
    const loadedP99 = percentile(loadedSamples, 99)
    log(`inserts without cleanup: ${quietSamples.length} batches of ${ingestBatch}, p50 ${fmt(percentile(quietSamples, 50), 1)} ms, p99 ${fmt(quietP99, 1)} ms`)
    log(`inserts during cleanup:  ${loadedSamples.length} batches of ${ingestBatch}, p50 ${fmt(percentile(loadedSamples, 50), 1)} ms, p99 ${fmt(loadedP99, 1)} ms`)
    log('')
    log(`a day's expiry, janitor time (worst of ${expiryDays}): ${fmt(worstMs, 0)} ms  target <= 1000 ms  ${worstMs <= 1000 ? 'PASS' : 'FAIL'}`)
    log(`a day's expiry, WAL (worst):                     ${fmt(worstWal / 1024, 0)} KB  target <= 1024 KB  ${worstWal <= 1024 * 1024 ? 'PASS' : 'FAIL'}`)
    log(`insert p99 ratio (during / without):            ${fmt(loadedP99 / quietP99, 2)}  target <= 1.20  ${loadedP99 / quietP99 <= 1.2 ? 'PASS' : 'FAIL'}`)
  } finally {
    await db.destroy()
  }
}

try {
  await main()
} finally {
  await sql.raw(`drop database if exists "${database}" with (force)`).execute(admin)
  await admin.destroy()
}
