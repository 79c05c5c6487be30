import { sql, type Kysely } from 'kysely'
import type { AnyDb } from './any-db.ts'

// Summaries leave the span's transaction (docs/architecture.md, "How a span travels"). A writer
// now stores a batch's spans and one row here, what the batch adds to its traces' summaries and to
// the usage rollups, and nothing else: no row another transaction updates, so writers never wait
// on each other. The summariser folds these rows into trace_summaries, session_summaries and
// usage_rollups, deleting them in the same transaction, so each is added exactly once.
//
// `traces` and `usage` are json, not jsonb: checked when a writer inserts them (writers run in
// parallel) and read back by the one summariser as the text they were, without a conversion.
//
// A trace now counts in a usage rollup once: in the UTC hour it started, under each model, vendor
// and service it used (or '' when it has none) and its user. Before, it counted in every hour it
// had a span in, which the writer had to look up among the trace's stored spans. The rows written
// before are recounted that way, one UTC day at a time.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table summary_deltas (
      id bigint generated always as identity primary key,
      created_at timestamptz not null default now(),
      trace_count integer not null,
      traces json not null,
      usage json not null
    )`.execute(db)
  // Kept out of line uncompressed: a row lives for seconds, and compressing and decompressing
  // hundreds of KB of JSON a batch cost Postgres CPU that the spans' own COPY needs.
  await sql`alter table summary_deltas alter column traces set storage external, alter column usage set storage external`.execute(db)
  // The models that answered, beside those asked for: the model filter matches either (a
  // response model is usually a dated version of the requested one, gpt-4o-mini-2024-07-18).
  // Traces summarised before are matched by their requested models only.
  await sql`alter table trace_summaries add column response_models text[] not null default '{}'`.execute(db)
  // The rollup rows a trace counts in (within the hour it started): one per dimension and value.
  await sql`
    create function tracewell_trace_rollup_keys(models text[], vendors text[], services text[], user_id text)
    returns table (dimension text, value text)
    language sql immutable parallel safe as $$
      select 'all', ''
      union all select 'model', m from unnest(case when cardinality(models) = 0 then array[''] else models end) as m
      union all select 'vendor', v from unnest(case when cardinality(vendors) = 0 then array[''] else vendors end) as v
      union all select 'service', s from unnest(case when cardinality(services) = 0 then array[''] else services end) as s
      union all select 'user', coalesce(user_id, '')
    $$`.execute(db)
  await recountRollupTraces(db)
}

/** Recounts the traces of every usage rollup as the summariser counts them (also what the tests check a backfill with). */
export async function recountRollupTraces(db: AnyDb): Promise<void> {
  const { rows } = await sql<{ first: Date | null; last: Date | null }>`
    select date_trunc('day', min(hour), 'UTC') as first, max(hour) as last from usage_rollups`.execute(db)
  const first = rows[0]?.first
  const last = rows[0]?.last
  if (!first || !last) return
  for (let day = new Date(first); day <= last; day = new Date(day.getTime() + 86_400_000)) {
    const to = new Date(day.getTime() + 86_400_000)
    await sql`update usage_rollups set traces = 0 where hour >= ${day} and hour < ${to}`.execute(db)
    // A trace may count under a value whose spans lie in other hours: a row of no spans, then.
    await sql`
      insert into usage_rollups (project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency)
      select t.project_id, k.dimension, date_trunc('hour', t.start_time, 'UTC'), k.value, count(*)::integer, 0, 0, 0, 0, null, array_fill(0, array[128])
      from trace_summaries t cross join lateral tracewell_trace_rollup_keys(t.models, t.vendors, t.services, t.user_id) as k
      where t.start_time >= ${day} and t.start_time < ${to}
      group by 1, 2, 3, 4
      on conflict (project_id, dimension, hour, value) do update set traces = excluded.traces`.execute(db)
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('summary_deltas').ifExists().execute()
  await sql`alter table trace_summaries drop column if exists response_models`.execute(db)
  await sql`drop function if exists tracewell_trace_rollup_keys(text[], text[], text[], text)`.execute(db)
}
