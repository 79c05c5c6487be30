// Monitors benchmark (npm run bench:monitors; not in CI): 1,000 monitors evaluated over what ten
// million spans leave behind, in a database of its own, by the evaluator's own loop
// (startMonitorLoop: FOR UPDATE SKIP LOCKED lanes, metricValue over the rollups and summaries).
// Prints the wall time of a pass over all of them against their 60 s interval, the CPU it took
// (this process, and Postgres from /proc: shared with whatever else runs on the machine), and each
// metric's p50/p95 as a ratio to one trace summary read by its primary key, measured in the same run.
//
// Data: monitors never read spans, so the spans are not stored: SPANS (default 10,000,000) spans'
// worth of what the writer keeps, generated in SQL (insert … select from generate_series, as fast
// as COPY) — a trace summary per 8 spans over 30 days ending now and 3 projects (4 models, 3
// vendors, 5 services, 1,000 users, 5 traces a session, 1 trace in 50 failing), the hourly usage
// rollups of those traces, a score for 1 trace in 10 and a judgment for 1 in 10 (1 in 8 failed).
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { testEnvironment } from '@tracewell/config'
import { createDb, createMonitor, createProject, createTeam, metricValue, migrateToLatest, sql, type Db, type MonitorMetric, type MonitorSettings } from '@tracewell/db'
import { startMonitorLoop } from '@tracewell/evaluator'
import { createDayPartitions, dayMs } from './seed-llm-spans.ts'
import { serverCpuSeconds } from './process-stats.ts'
import { percentile } from './statistics.ts'

const totalSpans = Number(process.env.SPANS ?? 10_000_000)
const monitorCount = Number(process.env.MONITORS ?? 1_000)
const concurrency = Number(process.env.MONITOR_CONCURRENCY ?? 4)
const passes = 3
const days = 30
const spansPerTrace = 8

const { DATABASE_URL: adminUrl } = testEnvironment()
const database = `tracewell_bench_monitors_${randomBytes(4).toString('hex')}`
const admin = createDb({ databaseUrl: adminUrl, poolSize: 1 })
const url = new URL(adminUrl)
url.pathname = `/${database}`
const log = (line: string) => process.stdout.write(`${line}\n`)
const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

await sql.raw(`create database "${database}"`).execute(admin)
const db = createDb({ databaseUrl: url.toString(), poolSize: concurrency + 2 })
try {
  await migrateToLatest(db)
  const now = Date.now()
  const team = await createTeam(db, { name: 'bench' })
  const projects = [await createProject(db, { teamId: team.id, name: 'bench 1' }), await createProject(db, { teamId: team.id, name: 'bench 2' }), await createProject(db, { teamId: team.id, name: 'bench 3' })].map((p) => p.id)
  const seedStarted = performance.now()
  await seed(db, projects, new Date(now - days * dayMs), new Date(now))
  log(`seeded ${fmt(totalSpans / spansPerTrace, 0)} trace summaries (${fmt(totalSpans, 0)} spans' worth) and their rollups, scores and judgments in ${fmt((performance.now() - seedStarted) / 1000)} s`)

  for (let i = 0; i < monitorCount; i++) await createMonitor(db, projects[i % projects.length] as string, monitorOf(i))
  const baseline = await timed(200, async () => {
    await sql`select * from trace_summaries where project_id = ${projects[0]} and trace_id = ${traceIdOf(1000)}`.execute(db)
  })
  log(`${fmt(monitorCount, 0)} monitors, ${concurrency} lanes; baseline (one trace summary by primary key): p50 ${fmt(percentile(baseline, 50), 2)} ms`)

  const loop = startMonitorLoop({ db, pollIntervalMs: 3_600_000, concurrency, logger: { info: () => {}, warn: () => {}, error: (obj, msg) => log(`${msg}: ${String((obj as { err?: unknown }).err)}`) } })
  try {
    for (let pass = 1; pass <= passes; pass++) {
      await sql`update monitors set next_evaluation_at = now()`.execute(db)
      const cpu = process.cpuUsage()
      const postgres = serverCpuSeconds('postgres')
      const started = performance.now()
      const evaluated = await loop.evaluateDue()
      const seconds = (performance.now() - started) / 1000
      const used = process.cpuUsage(cpu)
      log(
        `pass ${pass}: ${evaluated} monitors in ${fmt(seconds, 2)} s (${fmt((seconds / 60) * 100)} % of their 60 s interval, ${fmt((seconds * 1000) / evaluated, 2)} ms each); ` +
          `CPU: node ${fmt((used.user + used.system) / 1e6, 2)} s, postgres ${fmt(serverCpuSeconds('postgres') - postgres, 2)} s`,
      )
    }
  } finally {
    await loop.close()
  }
  const { rows: states } = await sql<{ state: string; n: number }>`select state, count(*)::int as n from monitors group by 1 order by 1`.execute(db)
  log(`states: ${states.map((s) => `${s.state} ${s.n}`).join(', ')}`)

  log('\none monitor\'s read, by metric (20 each, window 15 min unless said):')
  const base = percentile(baseline, 50)
  const probes: Array<[string, MonitorMetric, Partial<Parameters<typeof metricValue>[1]>]> = [
    ['error_rate', 'error_rate', {}],
    ['error_rate, filter service', 'error_rate', { filter: { service: 'svc-2' } }],
    ['error_rate, filter user', 'error_rate', { filter: { user: 'user-42' } }],
    ['latency_p95', 'latency_p95', {}],
    ['latency_p95, 1 hour', 'latency_p95', { from: new Date(now - 3_600_000) }],
    ['cost', 'cost', {}],
    ['cost, month to date (rollups)', 'cost', { from: new Date(Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1)) }],
    ['traces, filter model', 'traces', { filter: { model: 'gpt-4o' } }],
    ['score_avg', 'score_avg', { scoreName: 'quality' }],
    ['judge_failure_rate', 'judge_failure_rate', {}],
  ]
  for (const [label, metric, extra] of probes) {
    const times = await timed(20, () => metricValue(db, { projectId: projects[0] as string, metric, from: new Date(Date.now() - 900_000), to: new Date(), ...extra }))
    log(`  ${label.padEnd(34)} p50 ${fmt(percentile(times, 50), 2).padStart(7)} ms  p95 ${fmt(percentile(times, 95), 2).padStart(7)} ms  (${fmt(percentile(times, 50) / base)}× baseline)`)
  }
} finally {
  await db.destroy()
  await sql.raw(`drop database if exists "${database}" with (force)`).execute(admin)
  await admin.destroy()
}

async function timed(repetitions: number, run: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < repetitions; i++) {
    const started = performance.now()
    await run()
    times.push(performance.now() - started)
  }
  return times
}

function traceIdOf(t: number): string {
  return t.toString(16).padStart(32, '0')
}

/** The i-th monitor: the nine metrics in turn, windows of 5, 15 and 60 minutes, one in three filtered, one in a hundred a monthly budget. */
function monitorOf(i: number): MonitorSettings {
  const metrics: MonitorMetric[] = ['error_rate', 'latency_p95', 'cost', 'traces', 'latency_p50', 'tokens', 'score_avg', 'latency_p99', 'judge_failure_rate']
  const metric = metrics[i % metrics.length] as MonitorMetric
  const filters = [{}, { service: `svc-${i % 5}` }, { user: `user-${i % 1000}` }, {}, { status: 'error' as const }, { model: 'gpt-4o' }]
  const budget = i % 100 === 99
  return {
    name: `monitor ${i}`,
    metric: budget ? 'cost' : metric,
    scoreName: !budget && metric === 'score_avg' ? 'quality' : null,
    filter: budget ? {} : (filters[i % filters.length] as MonitorSettings['filter']),
    window: budget ? 'calendar_month' : 'rolling',
    windowSeconds: budget ? null : ([300, 900, 3600][i % 3] as number),
    operator: '>',
    threshold: budget ? 1000 : 0.5,
    evaluateEverySeconds: 60,
    channelIds: [],
    renotifyAfterSeconds: 3600,
    mutedUntil: null,
    budgetPercents: budget ? [50, 80, 100] : null,
  }
}

async function seed(into: Db, projectIds: string[], from: Date, to: Date): Promise<void> {
  await createDayPartitions(into, from, to)
  const traces = Math.floor(totalSpans / spansPerTrace)
  const stepMicros = Math.floor(((to.getTime() - from.getTime()) * 1000) / traces)
  const projectArray = `{${projectIds.join(',')}}`
  const perStatement = 100_000
  for (let low = 0; low < traces; low += perStatement) {
    const high = Math.min(low + perStatement, traces) - 1
    await sql`
      insert into trace_summaries (project_id, trace_id, name, has_root, service_name, start_time, end_time, duration_us, span_count, error_count,
        models, vendors, services, input_tokens, output_tokens, total_tokens, cost_usd, session_id, user_id, fold_day, words_in_blocks)
      select (${projectArray}::text[])[1 + t % 3], lpad(to_hex(t), 32, '0'), 'agent', true, 'svc-' || (t % 5), s, s + d, extract(epoch from d)::bigint * 1000000,
        ${spansPerTrace}, case when t % 50 = 0 then 1 else 0 end,
        array[(array['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet', 'llama-3-70b'])[1 + t % 4]], array[(array['openai', 'openai', 'anthropic', 'meta'])[1 + t % 4]],
        array['svc-' || (t % 5)], 700 * 7, 150 * 7, 850 * 7, 0.0021 * (1 + t % 4), 'sess-' || (t / 5), 'user-' || (t % 1000), (s at time zone 'UTC')::date, true
      from generate_series(${low}::bigint, ${high}::bigint) as t,
        lateral (select ${from}::timestamptz + make_interval(secs => t * ${stepMicros} / 1e6) as s, make_interval(secs => 0.2 + (t % 97) * 0.05) as d) as x`.execute(into)
  }
  // The hourly rollups of those traces, as the summariser would have folded them (latency left empty: monitors do not read it).
  await sql`
    insert into usage_rollups (project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency)
    select t.project_id, k.dimension, date_trunc('hour', t.start_time), k.value, count(*), sum(t.span_count), sum(t.error_count), sum(t.input_tokens),
      sum(t.output_tokens), sum(t.cost_usd), array_fill(0, array[128])
    from trace_summaries t cross join lateral (values ('all', ''), ('model', t.models[1]), ('vendor', t.vendors[1]), ('service', t.service_name), ('user', t.user_id)) as k(dimension, value)
    group by 1, 2, 3, 4`.execute(into)
  await sql`
    insert into scores (project_id, id, trace_id, name, data_type, value, source, created_at, updated_at)
    select project_id, 'score-' || trace_id, trace_id, 'quality', 'numeric', (('x' || right(trace_id, 4))::bit(16)::int % 100) / 100.0, 'api',
      end_time + interval '1 minute', end_time + interval '1 minute'
    from trace_summaries where ('x' || right(trace_id, 8))::bit(32)::int % 10 = 0`.execute(into)
  for (const projectId of projectIds) {
    await sql`insert into llm_connections (id, project_id, name, provider, base_url, api_key_sealed, api_key_hint) values (${`c-${projectId}`}, ${projectId}, 'judge', 'openai', 'https://api.openai.com/v1', 'sealed', '…abcd')`.execute(into)
    await sql`insert into evaluators (id, project_id, name, connection_id, model, prompt, score_name) values (${`e-${projectId}`}, ${projectId}, 'judge', ${`c-${projectId}`}, 'gpt-4o-mini', '{{output}}', 'judged')`.execute(into)
  }
  await sql`
    insert into evaluation_jobs (project_id, evaluator_id, trace_id, status, attempts, created_at, updated_at)
    select project_id, 'e-' || project_id, trace_id, case when ('x' || right(trace_id, 8))::bit(32)::int % 80 = 5 then 'failed' else 'completed' end, 1,
      end_time, end_time + interval '2 minutes'
    from trace_summaries where ('x' || right(trace_id, 8))::bit(32)::int % 10 = 5`.execute(into)
}
