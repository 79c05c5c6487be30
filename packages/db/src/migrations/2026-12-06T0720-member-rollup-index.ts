import { sql, type Kysely } from 'kysely'

// Frozen in time: never import application code here.
//
// Dashboards grouped by user or session (issue 45 §3) read a row per value and hour, nearly a row
// per trace (58,000 session rows of one project's week in bench:dashboards), out of rows as wide
// as a 128-bucket latency histogram and spread over the day partitions' pages. This index holds
// what the metric engine reads of those rows (metric-rollups.ts), in key order, so that a week of
// them is read from its pages alone (an index-only scan wherever the visibility map allows).
// Only the dimensions of many values: the others are a few rows an hour. Made on every day
// partition (and the partitions made later inherit it); writers wait for it while it is built.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index if not exists usage_rollups_members on usage_rollups (project_id, dimension, hour, value)
    include (traces, error_traces, spans, input_tokens, output_tokens, cost_usd, durations)
    where dimension in ('user', 'session', 'user.day', 'session.day')`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists usage_rollups_members`.execute(db)
}
