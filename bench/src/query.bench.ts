// Query benchmark (npm run bench:query; not in CI). Loads realistic LLM traces into a database of
// its own, then measures p50/p95 of what the console and API callers ask, through the control
// plane's routes (inject, so HTTP parsing and auth are counted, sockets are not), and prints each
// as a ratio to a plain indexed SELECT of one span measured in the same run, with the tables'
// sizes on disk.
//
// Data: SPANS spans (default 10,000,000; e.g. SPANS=1000000 for a quick run) of ~1.3 KB, over 30
// days and 3 projects, 8 spans a trace (an agent span, then LLM calls of 4 models and 3 vendors
// with tokens, cost, a prompt and a completion), 5 traces a session, 1,000 users, 1 trace in 50
// failing, and one trace of 1,000 spans, a partition a day (seed-llm-spans.ts: generated in SQL,
// then the trace and session summaries, usage rollups and word filters the writer would keep).
// KEEP_DATABASE=1 leaves the database in place for EXPLAIN afterwards (and prints its name);
// REUSE_DATABASE=<that name> measures it again without seeding, for alternating runs.
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { generateApiKey, displayPrefix, hashApiKey } from '@tracewell/auth'
import { ControlPlaneConfigSchema, loadConfig, testEnvironment } from '@tracewell/config'
import { buildApp } from '@tracewell/control-plane'
import { createDb, createProject, createTeam, insertApiKey, migrateToLatest, sql, type Db } from '@tracewell/db'
import { buildSummaries, createDayPartitions, insertGeneratedSpans, querySpans } from './seed-llm-spans.ts'
import { percentile } from './statistics.ts'

const totalSpans = Number(process.env.SPANS ?? 10_000_000)
const repetitions = Number(process.env.REPETITIONS ?? 20)
const days = 30
const dayMs = 24 * 3600_000

const { DATABASE_URL: adminUrl } = testEnvironment()
/** A database an earlier run kept, measured again without seeding: alternate runs on the same data. */
const reused = process.env.REUSE_DATABASE
const database = reused ?? `tracewell_bench_query_${randomBytes(4).toString('hex')}`
const admin = createDb({ databaseUrl: adminUrl, poolSize: 1 })
const url = new URL(adminUrl)
url.pathname = `/${database}`
const log = (line: string) => process.stdout.write(`${line}\n`)
const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

if (!reused) await sql.raw(`create database "${database}"`).execute(admin)
const db = createDb({ databaseUrl: url.toString(), poolSize: 4 })
try {
  await migrateToLatest(db)
  const projects = reused
    ? await db.selectFrom('projects').select(['id', 'team_id as teamId']).where('name', 'like', 'bench %').orderBy('name').execute()
    : await createProjects(db)
  const projectKey = generateApiKey('project')
  await insertApiKey(db, { kind: 'project', teamId: projects[0]!.teamId, projectId: projects[0]!.id, keyHash: hashApiKey(projectKey), prefix: displayPrefix(projectKey) })

  const now = Date.now()
  const bigTrace = 'b'.repeat(32)
  if (reused) log(`measuring ${reused} again`)
  else await seed(projects.map((project) => project.id), now, bigTrace)

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
    ['full-text search (a word in 1 span of 100k)', () => get('/api/traces?q=word77777%20'), 300],
    ['full-text search (a word in every LLM span)', () => get('/api/traces?q=content'), 300],
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
    select t.name, pg_size_pretty(sum(pg_total_relation_size(p.relid))) as size
    from unnest(array['spans', 'trace_summaries', 'usage_rollups', 'session_summaries', 'trace_text_blocks']) as t(name)
    -- A table and, when it is partitioned, its partitions (pg_partition_tree gives nothing for a plain table).
    cross join lateral (select t.name::regclass as relid union select relid from pg_partition_tree(t.name::regclass)) p
    group by t.name order by t.name`.execute(db)
  log(`\ntable sizes (with indexes and TOAST): ${sizes.rows.map((row) => `${row.name} ${row.size}`).join(', ')}`)
  await app.close()
} finally {
  await db.destroy()
  if (process.env.KEEP_DATABASE === '1' || reused) log(`kept database ${database}`)
  else await sql.raw(`drop database if exists "${database}" with (force)`).execute(admin)
  await admin.destroy()
}

async function createProjects(into: Db): Promise<Array<{ id: string; teamId: string }>> {
  const team = await createTeam(into, { name: 'bench' })
  return Promise.all([0, 1, 2].map((i) => createProject(into, { teamId: team.id, name: `bench ${i}` })))
}

/** Loads SPANS spans over the 30 days before `now` and their summaries. */
async function seed(projectIds: string[], now: number, bigTrace: string): Promise<void> {
  const start = new Date(now - days * dayMs)
  const traces = Math.floor(totalSpans / 8)
  let loaded = performance.now()
  await createDayPartitions(db, start, new Date(now + 3 * dayMs))
  await insertGeneratedSpans(db, totalSpans, querySpans(projectIds, start, totalSpans))
  // One trace of 1,000 spans, in project 0.
  await sql`
    insert into spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time, duration_ns, status_code, attributes, resource_attributes, events, links)
    select ${projectIds[0]}, ${bigTrace}, lpad(to_hex(1000000000 + i), 16, '0'), case when i = 0 then null else lpad(to_hex(1000000000), 16, '0') end,
      'step ' || i, 1, now() - interval '1 hour' + i * interval '1 millisecond', now() - interval '1 hour' + (i + 5) * interval '1 millisecond', 5000000, 0,
      jsonb_build_object('step', jsonb_build_object('intValue', i::text), 'text', jsonb_build_object('stringValue', repeat(md5(i::text), 30))), '{}'::jsonb, '[]'::jsonb, '[]'::jsonb
    from generate_series(0, 999) as i`.execute(db)
  log(`loaded ${totalSpans.toLocaleString('en-US')} spans in ${fmt((performance.now() - loaded) / 1000)} s`)
  loaded = performance.now()
  const timings = await buildSummaries(db, { textFilters: true })
  await sql`vacuum analyze`.execute(db)
  log(`summarised ${traces.toLocaleString('en-US')} traces and analysed in ${fmt((performance.now() - loaded) / 1000)} s `
    + `(trace summaries with word filters ${fmt(timings.traceSummariesMs / 1000)} s, usage rollups ${fmt(timings.usageRollupsMs / 1000)} s, sessions ${fmt(timings.sessionSummariesMs / 1000)} s)`)
}
