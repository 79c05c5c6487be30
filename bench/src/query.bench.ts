// Query benchmark (npm run bench:query; not in CI). Loads realistic LLM traces into a database of
// its own, then measures p50/p95 of what the console and API callers ask, through the control
// plane's routes (inject, so HTTP parsing and auth are counted, sockets are not), and prints each
// as a ratio to a plain indexed SELECT of one span measured in the same run, with the tables'
// sizes on disk.
//
// Data: SPANS spans (default 10,000,000; e.g. SPANS=1000000 for a quick run) of ~1.3 KB, over 30
// days and 3 projects, 8 spans a trace (an agent span, then LLM calls of 4 models and 3 vendors
// with tokens, cost, a prompt and a completion), 5 traces a session, 1,000 users, 1 trace in 50
// failing, and one trace of 1,000 spans. Seeded in SQL (as fast as COPY); the summaries and usage rollups are then
// built by the migrations' own backfills, which compute what the writer keeps (the word filters
// of full-text search too, which the backfill computes in JavaScript from the spans, as the writer does).
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { generateApiKey, displayPrefix, hashApiKey } from '@tracewell/auth'
import { ControlPlaneConfigSchema, loadConfig, testEnvironment } from '@tracewell/config'
import { buildApp } from '@tracewell/control-plane'
import { backfillSessionSummaries, backfillTraceSummaries, backfillTraceTextFilters, backfillUsageRollups, createDb, createProject, createTeam, insertApiKey, migrateToLatest, sql } from '@tracewell/db'
import { percentile } from './statistics.ts'

const totalSpans = Number(process.env.SPANS ?? 10_000_000)
const spansPerTrace = 8
const repetitions = Number(process.env.REPETITIONS ?? 20)
const days = 30
const dayMs = 24 * 3600_000

const { DATABASE_URL: adminUrl } = testEnvironment()
const database = `tracewell_bench_query_${randomBytes(4).toString('hex')}`
const admin = createDb({ databaseUrl: adminUrl, poolSize: 1 })
const url = new URL(adminUrl)
url.pathname = `/${database}`
const log = (line: string) => process.stdout.write(`${line}\n`)
const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

await sql.raw(`create database "${database}"`).execute(admin)
const db = createDb({ databaseUrl: url.toString(), poolSize: 4 })
try {
  await migrateToLatest(db)
  const team = await createTeam(db, { name: 'bench' })
  const projects = await Promise.all([0, 1, 2].map((i) => createProject(db, { teamId: team.id, name: `bench ${i}` })))
  const projectKey = generateApiKey('project')
  await insertApiKey(db, { kind: 'project', teamId: team.id, projectId: projects[0]!.id, keyHash: hashApiKey(projectKey), prefix: displayPrefix(projectKey) })

  const now = Date.now()
  const start = new Date(now - days * dayMs)
  const traces = Math.floor(totalSpans / spansPerTrace)
  const stepMicros = Math.floor((days * dayMs * 1000) / traces)
  let loaded = performance.now()
  const chunk = 200_000
  const ranges: Array<[number, number]> = []
  for (let low = 0; low < totalSpans; low += chunk) ranges.push([low, Math.min(low + chunk, totalSpans) - 1])
  const next = () => ranges.shift()
  await Promise.all(
    [0, 1].map(async () => {
      for (let range = next(); range; range = next()) {
        // i: the span; t: its trace; j: its place in the trace (0 is the agent span, the root).
        await sql`
          insert into spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time, duration_ns, status_code,
            service_name, llm_vendor, llm_model, llm_request_type, input_tokens, output_tokens, total_tokens, total_cost_usd,
            session_id, user_id, attributes, resource_attributes, events, links)
          select (array[${projects[0]!.id}, ${projects[1]!.id}, ${projects[2]!.id}])[t % 3 + 1], md5('t' || t), lpad(to_hex(i), 16, '0'),
            case when j = 0 then null else lpad(to_hex(t * 8), 16, '0') end,
            case when j = 0 then 'agent.run' else 'chat ' || model end, case when j = 0 then 1 else 3 end,
            ${start}::timestamptz + (t::bigint * ${stepMicros} + j * 150000) * interval '1 microsecond',
            ${start}::timestamptz + (t::bigint * ${stepMicros} + j * 150000 + case when j = 0 then 1200000 else 100000 + (i % 900) * 1000 end) * interval '1 microsecond',
            (case when j = 0 then 1200000 else 100000 + (i % 900) * 1000 end)::bigint * 1000,
            case when t % 50 = 0 and j = 1 then 2 else 0 end,
            'svc-' || (t % 5),
            case when j = 0 then null else (array['openai', 'anthropic', 'openai', 'aws.bedrock'])[model_index] end,
            case when j = 0 then null else model end, case when j = 0 then null else 'chat' end,
            case when j = 0 then null else 200 + i % 800 end, case when j = 0 then null else 50 + i % 300 end,
            case when j = 0 then null else 250 + i % 800 + i % 300 end,
            case when j = 0 then null else ((200 + i % 800) * 2.5 + (50 + i % 300) * 10) / 1000000 end,
            'sess-' || (t / 5), 'user-' || (t % 1000),
            jsonb_build_object(
              'gen_ai.prompt.0.role', jsonb_build_object('stringValue', 'user'),
              'gen_ai.prompt.0.content', jsonb_build_object('stringValue', 'word' || (i % 100003) || ' ' || repeat(md5(i::text) || ' ', 20)),
              'gen_ai.completion.0.content', jsonb_build_object('stringValue', repeat(md5((i + 1)::text) || ' ', 12)),
              'customer.tier', jsonb_build_object('stringValue', case when t % 7 = 0 then 'gold' else 'basic' end)),
            jsonb_build_object('service.name', jsonb_build_object('stringValue', 'svc-' || (t % 5))), '[]'::jsonb, '[]'::jsonb
          from (select i, i / ${spansPerTrace} as t, i % ${spansPerTrace} as j, 1 + i % 4 as model_index,
                  (array['gpt-4o', 'claude-sonnet-4', 'gpt-4o-mini', 'llama-3-70b'])[1 + i % 4] as model
                from generate_series(${range[0]}::bigint, ${range[1]}::bigint) as i) s`.execute(db)
      }
    }),
  )
  // One trace of 1,000 spans, in project 0.
  const bigTrace = 'b'.repeat(32)
  await sql`
    insert into spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time, duration_ns, status_code, attributes, resource_attributes, events, links)
    select ${projects[0]!.id}, ${bigTrace}, lpad(to_hex(1000000000 + i), 16, '0'), case when i = 0 then null else lpad(to_hex(1000000000), 16, '0') end,
      'step ' || i, 1, now() - interval '1 hour' + i * interval '1 millisecond', now() - interval '1 hour' + (i + 5) * interval '1 millisecond', 5000000, 0,
      jsonb_build_object('step', jsonb_build_object('intValue', i::text), 'text', jsonb_build_object('stringValue', repeat(md5(i::text), 30))), '{}'::jsonb, '[]'::jsonb, '[]'::jsonb
    from generate_series(0, 999) as i`.execute(db)
  log(`loaded ${totalSpans.toLocaleString('en-US')} spans in ${fmt((performance.now() - loaded) / 1000)} s`)
  loaded = performance.now()
  await backfillTraceSummaries(db)
  await backfillUsageRollups(db)
  await backfillSessionSummaries(db)
  await backfillTraceTextFilters(db)
  await sql`vacuum analyze`.execute(db)
  log(`summarised ${traces.toLocaleString('en-US')} traces and analysed in ${fmt((performance.now() - loaded) / 1000)} s`)

  const config = loadConfig(ControlPlaneConfigSchema, { DATABASE_URL: url.toString(), LOG_LEVEL: 'silent' })
  const app = await buildApp(config, { db })
  await app.ready()
  const get = async (path: string) => {
    const response = await app.inject({ url: path, headers: { 'x-api-key': projectKey } })
    if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode} ${response.body.slice(0, 200)}`)
    return response
  }
  const sampleSpan = (await sql<{ span_id: string; trace_id: string }>`select span_id, trace_id from spans where project_id = ${projects[0]!.id} limit 1 offset 1000`.execute(db)).rows[0]!
  const from30 = new Date(now - days * dayMs).toISOString()

  const cases: Array<[string, () => Promise<unknown>, number]> = [
    ['baseline: one span by primary key (SELECT)', () => sql`select * from spans where project_id = ${projects[0]!.id} and trace_id = ${sampleSpan.trace_id} and span_id = ${sampleSpan.span_id}`.execute(db), 0],
    ['trace list, first page', () => get('/api/traces'), 150],
    ['  filter service', () => get('/api/traces?service=svc-3'), 150],
    ['  filter model', () => get('/api/traces?model=llama-3-70b'), 150],
    ['  filter vendor', () => get('/api/traces?vendor=anthropic'), 150],
    ['  filter status=error', () => get('/api/traces?status=error'), 150],
    ['  filter name (contains)', () => get('/api/traces?name=agent'), 150],
    ['  filter attribute key=value', () => get(`/api/traces?attr=${encodeURIComponent('customer.tier=gold')}`), 150],
    ['  filter session', () => get('/api/traces?session=sess-1000'), 150],
    ['  filter user', () => get('/api/traces?user=user-42'), 150],
    ['  filter min duration', () => get('/api/traces?min_duration_ms=1000'), 150],
    ['  filter min cost', () => get('/api/traces?min_cost=0.01'), 150],
    ['  filter time window (1 day)', () => get(`/api/traces?from=${new Date(now - 3 * dayMs).toISOString()}&to=${new Date(now - 2 * dayMs).toISOString()}`), 150],
    ['  sort by duration', () => get('/api/traces?sort=duration'), 150],
    ['  sort by cost', () => get('/api/traces?sort=cost'), 150],
    ['  sort by tokens', () => get('/api/traces?sort=tokens'), 150],
    ['one trace of 1,000 spans', () => get(`/api/traces/${bigTrace}`), 100],
    ['a session', () => get('/api/sessions/sess-1200'), 150],
    ['sessions list', () => get('/api/sessions'), 150],
    ['usage, 30 days by model (day buckets)', () => get(`/api/usage?from=${from30}&bucket=day&group_by=model`), 500],
    ['full-text search (a word in 1 span of 100k)', () => get('/api/traces?q=word77777%20'), 1000],
  ]
  const samples = new Map<string, number[]>(cases.map(([name]) => [name, []]))
  for (const [, run] of cases) await run() // warm caches and plans once
  // Rounds alternate the cases so that background load is spread over all of them alike.
  for (let round = 0; round < repetitions; round++) {
    for (const [name, run] of cases) {
      const began = performance.now()
      await run()
      samples.get(name)!.push(performance.now() - began)
    }
  }
  const baseline = percentile(samples.get(cases[0]![0])!, 50)
  log(`\n${'query'.padEnd(46)} ${'p50 ms'.padStart(9)} ${'p95 ms'.padStart(9)} ${'p50/baseline'.padStart(13)} ${'target p95'.padStart(11)}`)
  for (const [name, , target] of cases) {
    const values = samples.get(name)!
    const p50 = percentile(values, 50)
    const p95 = percentile(values, 95)
    const verdict = target === 0 ? '' : `${target} ms ${p95 <= target ? 'ok' : 'MISSED'}`
    log(`${name.padEnd(46)} ${fmt(p50, 2).padStart(9)} ${fmt(p95, 2).padStart(9)} ${fmt(p50 / baseline, 0).padStart(13)} ${verdict.padStart(11)}`)
  }
  const sizes = await sql<{ name: string; size: string }>`
    select relname as name, pg_size_pretty(pg_total_relation_size(oid)) as size from pg_class where relname in ('spans', 'trace_summaries', 'usage_rollups', 'session_summaries') order by relname`.execute(db)
  log(`\ntable sizes (with indexes and TOAST): ${sizes.rows.map((row) => `${row.name} ${row.size}`).join(', ')}`)
  await app.close()
} finally {
  await db.destroy()
  await sql.raw(`drop database if exists "${database}" with (force)`).execute(admin)
  await admin.destroy()
}
