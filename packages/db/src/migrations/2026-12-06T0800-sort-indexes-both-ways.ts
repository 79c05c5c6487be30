import { sql, type Kysely } from 'kysely'

// Frozen in time: never import application code here.
//
// The trace list sorts by cost and by tokens both ways with unknown (null) values last. They had
// an index a direction, each over a coalesce that put the nulls past every value (2026-11-24T1100,
// 2026-11-26T2310): four index entries for every new trace, a good part of what the summariser's
// COPY of new summaries costs Postgres (docs/benchmarks.md). One plain index a column serves both
// directions, scanned backwards for descending; the list reads the known values through it first
// and the unknown ones (its null entries, by trace id) second (trace-search.repository.ts).
// Made on every day partition (the partitions made later inherit it); writers wait while it is built.

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const index of ['cost_idx', 'cost_asc_idx', 'tokens_idx', 'tokens_asc_idx']) await sql`drop index ${sql.id(`trace_summaries_${index}`)}`.execute(db)
  await sql`create index trace_summaries_cost_idx on trace_summaries (project_id, cost_usd, trace_id)`.execute(db)
  await sql`create index trace_summaries_tokens_idx on trace_summaries (project_id, total_tokens, trace_id)`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index trace_summaries_cost_idx`.execute(db)
  await sql`drop index trace_summaries_tokens_idx`.execute(db)
  await sql`create index trace_summaries_cost_idx on trace_summaries (project_id, (coalesce(cost_usd, -1)) desc, trace_id desc)`.execute(db)
  await sql`create index trace_summaries_cost_asc_idx on trace_summaries (project_id, (coalesce(cost_usd, 100000000000000000000000000000::numeric)), trace_id)`.execute(db)
  await sql`create index trace_summaries_tokens_idx on trace_summaries (project_id, (coalesce(total_tokens, -1)) desc, trace_id desc)`.execute(db)
  await sql`create index trace_summaries_tokens_asc_idx on trace_summaries (project_id, (coalesce(total_tokens, 9223372036854775807::bigint)), trace_id)`.execute(db)
}
