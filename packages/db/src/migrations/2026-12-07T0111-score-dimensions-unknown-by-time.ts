import { sql, type Kysely } from 'kysely'

// Frozen in time: never import application code here.
//
// The rows of score_dimensions whose trace's dimensions are still unknown (few) are read by the
// metric engine for a score name and window, beside its trace's summary: through the partial
// index by trace (migration 2026-12-06T2200) that read scanned the window's every row again, the
// table's pages where the visibility map is not set (this Postgres never autovacuums). By name and
// time instead, as judgment_dimensions_unknown_idx (2026-12-07T0110) is by time; the fold's reads
// of the unknown rows take any order.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index score_dimensions_unknown_created_idx on score_dimensions (project_id, name, created_at) where not summarised`.execute(db)
  await sql`drop index score_dimensions_unknown_idx`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index score_dimensions_unknown_idx on score_dimensions (project_id, trace_id) where not summarised`.execute(db)
  await sql`drop index score_dimensions_unknown_created_idx`.execute(db)
}
