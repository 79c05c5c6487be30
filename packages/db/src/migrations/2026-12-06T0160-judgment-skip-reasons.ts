import { sql, type Kysely } from 'kysely'

// Why a judgment was skipped (issue 48 §8): left out by the evaluator's sampling rate, or a trace
// with nothing to judge (no input or output for the template), which is never sent to the judge.
// Every judgment skipped before this column was skipped by sampling.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table evaluation_jobs add column skip_reason text`.execute(db)
  await sql`update evaluation_jobs set skip_reason = 'not sampled (the evaluator''s sampling rate)' where status = 'skipped'`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table evaluation_jobs drop column skip_reason`.execute(db)
}
