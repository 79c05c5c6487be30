// Retention cleanup benchmark (npm run bench:cleanup). Measures, in one run on this machine:
//   1. the janitor's deletion rate as a ratio to one plain `DELETE … WHERE project_id = … AND
//      start_time < …` on identical data, and one such DELETE of the same rows of each table the
//      janitor also cleans (trace and session summaries, usage rollups) (target ≥ 0.5: batching
//      may cost at most half the speed),
//      alternating the two on fresh clones so background load favours neither;
//   2. the p99 latency of back-to-back 100-span ingest batches (the writer's storeSpans)
//      while the janitor runs, as a ratio to their p99 without it (target ≤ 2), in short windows
//      with and without cleanup interleaved (the janitor on a short time budget, called again
//      until complete) so that both sides see the same background.
// With spans partitioned by day, this is the row-by-row path: the seed's days have no partition
// of their own, so every span is in the default partition (day-expiry.bench.ts measures the drops).
// Data: 1,000,000 spans of project A (~1.3 KB rows, half past its 30-day cutoff) and 100,000 of
// project B whose policy is disabled, one trace each, five traces a session, with their trace and
// session summaries, usage rollups and word filters, seeded once and cloned per measurement (CREATE DATABASE …
// TEMPLATE, a file copy) so every measurement starts from the same bytes. Drops its databases.
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { JanitorConfigSchema, loadConfig, testEnvironment } from '@tracewell/config'
import { storeSpans } from '@tracewell/write-path'
import { backfillSessionSummaries, backfillTextBlocks, backfillTraceSummaries, backfillTraceTextFilters, backfillUsageRollups, countSpans, createDb, createProject, createTeam, migrateToLatest, sql, upsertRetentionPolicy, type Db, type SpanInsert } from '@tracewell/db'
import { buildApp } from '@tracewell/janitor'
import { percentile } from './statistics.ts'

const spansOfA = 1_000_000
const spansOfB = 100_000
const retentionDays = 30
// Spans are spread evenly over 60 days, half before and half after a 2-day gap around the
// cutoff, so the janitor's cutoff (from its own clock, a minute later) and the baseline's select
// exactly the same 500,000 spans.
const historyDays = 60
const gapDays = 2
const ingestBatch = 100
// Windows of ingest without cleanup alternate with cleanup slices of this length.
const cleanupSliceMs = 500
const rounds = 3
const dayMs = 24 * 60 * 60 * 1000

const { DATABASE_URL: adminUrl } = testEnvironment()
const runId = randomBytes(4).toString('hex')
const databases: string[] = []
const admin = createDb({ databaseUrl: adminUrl, poolSize: 1 })

function urlOf(database: string): string {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
}

async function createDatabase(name: string, template?: string): Promise<void> {
  databases.push(name)
  // FILE_COPY copies the template's files instead of WAL-logging every block: seconds, not minutes.
  const from = template ? ` template "${template}" strategy file_copy` : ''
  await sql.raw(`create database "${name}"${from}`).execute(admin)
}

function log(line: string): void {
  process.stdout.write(`${line}\n`)
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** One project's spans in time order, interleaved with the other's as real traffic would be. */
async function seed(db: Db, projectA: string, projectB: string, now: number): Promise<void> {
  const total = spansOfA + spansOfB
  const start = new Date(now - (historyDays + gapDays / 2) * dayMs)
  const stepMicros = Math.floor((historyDays * dayMs * 1000) / total)
  const half = total / 2
  const chunk = 100_000
  const ranges: Array<[number, number]> = []
  for (let low = 1; low <= total; low += chunk) ranges.push([low, Math.min(low + chunk - 1, total)])
  // Two writers: this machine's Postgres has two cores to fill.
  const next = () => ranges.shift()
  await Promise.all(
    [0, 1].map(async () => {
      for (let range = next(); range; range = next()) {
        const [low, high] = range
        // Every 11th span is B's: 100,000 of 1,100,000. Attributes make a row of about 1 KB, like
        // an LLM call with its prompt and completion.
        await sql`
          insert into spans (project_id, trace_id, span_id, name, kind, start_time, end_time, duration_ns, status_code,
            service_name, service_version, scope_name, scope_version, llm_vendor, llm_model, llm_request_type,
            input_tokens, output_tokens, total_tokens, session_id, user_id, attributes, resource_attributes, events, links)
          select case when i % 11 = 0 then ${projectB} else ${projectA} end, md5(i::text), lpad(to_hex(i), 16, '0'),
            'openai.chat.completions.create', 3,
            ${start}::timestamptz + (i::bigint * ${stepMicros}) * interval '1 microsecond' + gap.shift,
            ${start}::timestamptz + (i::bigint * ${stepMicros}) * interval '1 microsecond' + gap.shift + interval '800 milliseconds',
            800000000, 0, 'bench-app', '1.0.0', 'langtrace', '3.0', 'openai', 'gpt-4o', 'chat_completion', 120, 40, 160,
            'session-' || (i / 5), 'user-' || (i % 1000),
            jsonb_build_object('llm.prompts', repeat(md5(i::text), 22), 'llm.responses', repeat(md5((i + 1)::text), 4),
              'llm.model', 'gpt-4o', 'llm.temperature', 0.2),
            '{"service.name":"bench-app","telemetry.sdk.name":"langtrace"}'::jsonb, '[]'::jsonb, '[]'::jsonb
          from generate_series(${low}::int, ${high}::int) as i,
            lateral (select case when i > ${half} then ${gapDays} * interval '1 day' else interval '0' end as shift) as gap`.execute(db)
      }
    }),
  )
  // What the writer keeps beside the spans, which the janitor deletes with them: built by the
  // migrations' own backfills.
  await backfillTraceSummaries(db, { wordsInBlocks: true })
  await backfillUsageRollups(db)
  await backfillSessionSummaries(db)
  await backfillTraceTextFilters(db)
  await backfillTextBlocks(db)
}

let ingestSequence = 0
function ingestSpans(projectId: string): SpanInsert[] {
  const nowNanos = BigInt(Date.now()) * 1_000_000n
  const attribute = randomBytes(380).toString('hex')
  return Array.from({ length: ingestBatch }, () => {
    const n = ++ingestSequence
    return {
      projectId,
      traceId: randomBytes(16).toString('hex'),
      spanId: n.toString(16).padStart(16, '0'),
      parentSpanId: null,
      name: 'openai.chat.completions.create',
      kind: 3,
      startTimeUnixNano: nowNanos.toString(),
      endTimeUnixNano: (nowNanos + 800_000_000n).toString(),
      durationNs: '800000000',
      traceState: null,
      statusCode: 0,
      statusMessage: null,
      serviceName: 'bench-app',
      serviceVersion: '1.0.0',
      scopeName: 'langtrace',
      scopeVersion: '3.0',
      llmVendor: 'openai',
      llmModel: 'gpt-4o',
      llmRequestType: 'chat_completion',
      inputTokens: 120,
      outputTokens: 40,
      totalTokens: 160,
      attributes: { 'llm.prompts': { stringValue: attribute }, 'llm.model': { stringValue: 'gpt-4o' } },
      resourceAttributes: { 'service.name': { stringValue: 'bench-app' } },
      events: [],
      links: [],
    }
  })
}

/** Inserts 100-span batches back to back until `done()`; returns each batch's latency in ms. */
async function ingestUntil(db: Db, projectId: string, done: () => boolean): Promise<number[]> {
  const latencies: number[] = []
  while (!done()) {
    const spans = ingestSpans(projectId)
    const started = performance.now()
    await storeSpans(db, spans)
    latencies.push(performance.now() - started)
  }
  return latencies
}

async function main(): Promise<void> {
  const benchStarted = performance.now()
  const now = Date.now()
  const seedName = `tracewell_bench_cleanup_${runId}_seed`
  await createDatabase(seedName)
  const seedDb = createDb({ databaseUrl: urlOf(seedName), poolSize: 2 })
  await migrateToLatest(seedDb)
  const team = await createTeam(seedDb, { name: 'bench' })
  const projectA = (await createProject(seedDb, { teamId: team.id, name: 'A' })).id
  const projectB = (await createProject(seedDb, { teamId: team.id, name: 'B' })).id
  await upsertRetentionPolicy(seedDb, { projectId: projectA, enabled: true, retentionDays })
  await upsertRetentionPolicy(seedDb, { projectId: projectB, enabled: false, retentionDays: 1 })
  const started = performance.now()
  await seed(seedDb, projectA, projectB, now)
  // Long-committed rows, as in production: hint bits set and statistics gathered before cloning.
  await sql`vacuum (freeze, analyze)`.execute(seedDb)
  const { rows: sizeRows } = await sql<{ size: string; width: number }>`
    select pg_size_pretty((select sum(pg_total_relation_size(inhrelid)) from pg_inherits where inhparent = 'spans'::regclass)) as size, (select avg(pg_column_size(s.*))::int from spans s tablesample system (1)) as width`.execute(seedDb)
  await seedDb.destroy()
  log(`seeded ${fmt(spansOfA)} spans of A + ${fmt(spansOfB)} of B (policy disabled) in ${fmt((performance.now() - started) / 1000, 1)} s; spans table ${sizeRows[0]?.size}, ~${sizeRows[0]?.width} bytes a row`)

  // The janitor computes its cutoff from its own clock, later than this; both fall in the gap.
  const cutoff = new Date(now - retentionDays * dayMs)
  // The first half of the seed (before the gap) holds 550,000 spans, of which every 11th is B's.
  const oldSpansOfA = (spansOfA + spansOfB) / 2 - spansOfB / 2 // 500,000

  // The janitor's own settings (CLEANUP_BATCH_SIZE, …) may be set in the environment to try them.
  const janitorConfig = loadConfig(JanitorConfigSchema, { ...process.env, DATABASE_URL: adminUrl, LOG_LEVEL: 'silent', CRON_API_KEY: '' })
  let clones = 0
  const withClone = async <T>(work: (db: Db) => Promise<T>): Promise<T> => {
    const name = `tracewell_bench_cleanup_${runId}_${++clones}`
    await createDatabase(name, seedName)
    const db = createDb({ databaseUrl: urlOf(name), poolSize: 4 })
    try {
      // Each measurement starts right after a checkpoint, so each pays the same full-page writes.
      await sql`checkpoint`.execute(db)
      return await work(db)
    } finally {
      await db.destroy()
      await sql.raw(`drop database "${name}" with (force)`).execute(admin)
    }
  }

  // 1. Deletion rate: a plain DELETE and the janitor, alternately, `rounds` times each on identical
  //    clones, so that a change in what else the machine is doing does not favour either.
  const plain = { spans: 0, seconds: 0 }
  const janitor = { spans: 0, seconds: 0 }
  for (let round = 0; round < rounds; round++) {
    await withClone(async (db) => {
      const started = performance.now()
      // The same rows as the janitor deletes: the spans, and their summaries and rollups.
      const result = await sql`delete from spans where project_id = ${projectA} and start_time < ${cutoff}`.execute(db)
      await sql`delete from trace_summaries where project_id = ${projectA} and start_time < ${cutoff}`.execute(db)
      await sql`delete from usage_rollups where project_id = ${projectA} and hour + interval '1 hour' <= ${cutoff}`.execute(db)
      await sql`delete from session_summaries where project_id = ${projectA} and last_seen < ${cutoff}`.execute(db)
      plain.seconds += (performance.now() - started) / 1000
      plain.spans += Number(result.numAffectedRows ?? 0n)
    })
    await withClone(async (db) => {
      const app = await buildApp(janitorConfig, { db })
      const started = performance.now()
      const response = await app.inject({ url: '/api/cron/cleanup-traces' })
      janitor.seconds += (performance.now() - started) / 1000
      await app.close()
      const body = response.json() as { deletedSpans: number; complete?: boolean }
      if (response.statusCode !== 200 || body.complete === false) throw new Error(`janitor answered ${response.statusCode}: ${response.body}`)
      janitor.spans += body.deletedSpans
      const [leftA, leftB] = [await countSpans(db, projectA), await countSpans(db, projectB)]
      if (body.deletedSpans !== oldSpansOfA || leftA !== spansOfA - oldSpansOfA || leftB !== spansOfB) {
        throw new Error(`janitor deleted the wrong spans: ${body.deletedSpans}; A left ${leftA}, B left ${leftB}`)
      }
      // Nothing of A from before the cutoff is left beside the spans either.
      const { rows: [left] } = await sql<{ traces: number; rollups: number; sessions: number }>`
        select (select count(*)::int from trace_summaries where project_id = ${projectA} and start_time < ${cutoff}) as traces,
          (select count(*)::int from usage_rollups where project_id = ${projectA} and hour + interval '1 hour' <= ${cutoff}) as rollups,
          (select count(*)::int from session_summaries where project_id = ${projectA} and last_seen < ${cutoff}) as sessions`.execute(db)
      if (left?.traces !== 0 || left.rollups !== 0 || left.sessions !== 0) throw new Error(`janitor left A's summaries before the cutoff: ${JSON.stringify(left)}`)
    })
  }
  if (plain.spans !== rounds * oldSpansOfA) throw new Error(`plain DELETE deleted ${plain.spans / rounds}, expected ${oldSpansOfA}`)
  const plainRate = plain.spans / plain.seconds
  const janitorRate = janitor.spans / janitor.seconds
  log(`plain DELETE:   ${rounds} × ${fmt(oldSpansOfA)} spans in ${fmt(plain.seconds, 2)} s = ${fmt(plainRate)} spans/s`)
  log(`janitor run:    ${rounds} × ${fmt(oldSpansOfA)} spans in ${fmt(janitor.seconds, 2)} s = ${fmt(janitorRate)} spans/s (batches of ${fmt(janitorConfig.CLEANUP_BATCH_SIZE)})`)

  // 2. Ingest latency: 100-span batches back to back, in windows without cleanup interleaved with
  //    slices of the cleanup (the janitor with a short time budget, called again until complete),
  //    so that both sets of samples see the same background.
  const sliced = { ...janitorConfig, CLEANUP_TIME_BUDGET_MS: cleanupSliceMs }
  const { quiet, loaded, calls, deleted, seconds } = await withClone(async (db) => {
    const app = await buildApp(sliced, { db })
    const quiet: number[] = []
    const loaded: number[] = []
    let calls = 0
    let deleted = 0
    let seconds = 0
    for (let complete = false; !complete; ) {
      const until = performance.now() + cleanupSliceMs
      quiet.push(...(await ingestUntil(db, projectA, () => performance.now() >= until)))
      let cleaning = true
      const during = ingestUntil(db, projectA, () => !cleaning)
      const started = performance.now()
      const response = await app.inject({ url: '/api/cron/cleanup-traces' })
      seconds += (performance.now() - started) / 1000
      cleaning = false
      loaded.push(...(await during))
      const body = response.json() as { deletedSpans: number; complete?: boolean }
      calls += 1
      deleted += body.deletedSpans
      complete = body.complete !== false
    }
    const until = performance.now() + cleanupSliceMs
    quiet.push(...(await ingestUntil(db, projectA, () => performance.now() >= until)))
    await app.close()
    return { quiet, loaded, calls, deleted, seconds }
  })
  const quietP99 = percentile(quiet, 99)
  const loadedP99 = percentile(loaded, 99)
  log(`ingest without cleanup: ${fmt(quiet.length)} batches of ${ingestBatch}, p50 ${fmt(percentile(quiet, 50), 1)} ms, p99 ${fmt(quietP99, 1)} ms`)
  log(`ingest during cleanup:  ${fmt(loaded.length)} batches of ${ingestBatch}, p50 ${fmt(percentile(loaded, 50), 1)} ms, p99 ${fmt(loadedP99, 1)} ms` +
    ` (janitor meanwhile: ${fmt(deleted)} spans in ${calls} calls, ${fmt(seconds, 2)} s = ${fmt(deleted / seconds)} spans/s)`)

  const rateRatio = janitorRate / plainRate
  const latencyRatio = loadedP99 / quietP99
  log('')
  log(`deletion rate ratio (janitor / plain DELETE): ${fmt(rateRatio, 2)}  target >= 0.50  ${rateRatio >= 0.5 ? 'PASS' : 'FAIL'}`)
  log(`ingest p99 ratio (during cleanup / without):  ${fmt(latencyRatio, 2)}  target <= 2.00  ${latencyRatio <= 2 ? 'PASS' : 'FAIL'}`)
  log(`(benchmark took ${fmt((performance.now() - benchStarted) / 1000, 0)} s)`)
}

try {
  await main()
} finally {
  for (const name of databases) await sql.raw(`drop database if exists "${name}" with (force)`).execute(admin)
  await admin.destroy()
}
