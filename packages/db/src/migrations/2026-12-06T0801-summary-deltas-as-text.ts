import { sql, type Kysely } from 'kysely'

// Frozen in time: never import application code here.
//
// A summary delta's traces and usage become text: Postgres no longer parses every row's JSON on
// insert to check it, which was a part of what a one-span trace costs it (docs/benchmarks.md,
// 2026-12-06). The writer makes the text with JSON.stringify and the summariser parses it back in
// JavaScript; a statement that reads it as JSON casts it. Still kept out of line uncompressed
// (2026-11-26T0900): a new type takes its type's storage, so it is set again.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table summary_deltas alter column traces type text, alter column usage type text`.execute(db)
  await sql`alter table summary_deltas alter column traces set storage external, alter column usage set storage external`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table summary_deltas alter column traces type json using traces::json, alter column usage type json using usage::json`.execute(db)
  await sql`alter table summary_deltas alter column traces set storage external, alter column usage set storage external`.execute(db)
}
