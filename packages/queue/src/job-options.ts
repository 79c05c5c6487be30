import type { JobsOptions } from 'bullmq'

/**
 * Options every span-batch job is added with.
 *
 * attempts × backoff: with 12 attempts and exponential backoff from 1 s the retries wait
 * 1 + 2 + 4 + … + 1024 s = 2047 s ≈ 34 minutes in total, so a Postgres outage of about half an
 * hour only delays spans. (The writer may cap attempts lower with WRITER_MAX_ATTEMPTS.)
 *
 * Retention is bounded so Redis cannot fill up with finished jobs: the last 1000 completed jobs
 * (for inspection), and failed jobs for 14 days or the newest 10 000 — long enough to notice and
 * replay them with `npm run queue:replay`.
 */
export const defaultSpanBatchJobOptions: JobsOptions = {
  attempts: 12,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { count: 1_000 },
  removeOnFail: { count: 10_000, age: 14 * 24 * 3600 },
}

/** The name every span-batch job carries (the queue holds one kind of job). */
export const spanBatchJobName = 'span-batch'
