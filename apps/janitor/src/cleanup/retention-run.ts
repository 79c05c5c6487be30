import { performance } from 'node:perf_hooks'
import {
  dayAfter, deleteOldestSpansBefore, deleteSpentAccountRows, pruneAuditLog, deleteSummariesOfWindow, ensureDayPartitions, listDayPartitions, listEnabledRetentionPolicies,
  recordCleanupRun, recordRetentionRun, sql, startOfUtcDay, withAdvisoryLock, type Db, type DayPartition, type DeletedWindow, type RetentionPolicyDto,
  type RetentionRunTrigger,
} from '@tracewell/db'
import type { Logger } from '@tracewell/logger'
import { dropExpiredPartitions } from './partition-drop.ts'
import { compressWal, probeWalCompression, type WalCompression } from './wal-compression.ts'

/**
 * The Postgres advisory lock that makes one cleanup run at a time across every janitor replica
 * (and the all-in-one process) connected to the same database. A fixed constant, not a
 * hash of a name, so that it is the same in every version; its bytes spell "tw-clean" in ASCII,
 * which makes it recognisable in pg_locks. No other Tracewell lock may use it.
 */
export const CLEANUP_LOCK_KEY = 0x74772d636c65616en

/** What a failed project says in the response; the detail (possibly SQL) goes to the log only. */
export const PROJECT_FAILURE_MESSAGE = 'cleanup failed for this project'

const dayMs = 24 * 60 * 60 * 1000

export interface RetentionRunOptions {
  /** Spans deleted per statement (CLEANUP_BATCH_SIZE): bounds each statement's locks and WAL. */
  batchSize: number
  /** After this long the run stops between two batches and reports what is left (CLEANUP_TIME_BUDGET_MS). */
  timeBudgetMs: number
  /** The run's clock; every cutoff is computed from this one instant. Defaults to the start of the run. */
  now?: Date
  log: Logger
  /** Called after every batch, so progress is visible (metrics) while a long run is still going. */
  onDeleted?: (projectId: string, deleted: number) => void
  /** Aborting stops the run between two batches, like an exhausted budget (used on shutdown). */
  signal?: AbortSignal
  /** How long dropping a partition waits for its lock on `spans` before leaving it to the next run (CLEANUP_LOCK_TIMEOUT_MS; 1 s when not given). */
  lockTimeoutMs?: number
  /**
   * CLEANUP_CUTOFF. 'exact' (the default): now − retentionDays to the microsecond, as the API has
   * always promised; the partition holding the cutoff is deleted from row by row, so over a day of
   * runs a whole day's rows are, before the emptied partition is dropped. 'day': a project's
   * cutoff is the start of the UTC day holding now − retentionDays, so spans are kept
   * retentionDays and at most a day more, and a day's expiry is one dropped partition.
   */
  cutoffs?: CutoffGranularity
  /** AUDIT_LOG_RETENTION_DAYS: the run also removes older audit log entries; absent, it leaves the audit log alone. */
  auditLogRetentionDays?: number
  /** Who started the run, as retention_runs records it: the endpoint's caller ('request', the default) or `npm start`'s schedule. */
  trigger?: RetentionRunTrigger
}

export type CutoffGranularity = 'day' | 'exact'

export interface ProjectCleanupReport {
  projectId: string
  retentionDays: number
  /** ISO 8601. Spans that started strictly before it are deleted; one starting exactly at it is kept. */
  cutoff: string
  deletedSpans: number
  /** The run stopped before this project was finished; the next run continues it. */
  remaining?: true
  /** Set when this project's deletion failed; a generic text, never the underlying error. */
  error?: string
}

export interface RetentionRunReport {
  /** False when the time budget ran out (or the run was aborted) before every project was done. */
  complete: boolean
  /** Spans deleted row by row (the batches); the spans of dropped partitions are not counted. */
  deletedSpans: number
  /** The day partitions (of `spans` and of the summaries) dropped whole, every row of them past every project's retention. */
  droppedPartitions: string[]
  failedProjects: number
  projects: ProjectCleanupReport[]
  /** Audit log entries removed for being older than AUDIT_LOG_RETENTION_DAYS. */
  prunedAuditEntries: number
  /** Sessions, invitations and password resets unusable for longer than `spentAccountRowsKeptDays`. */
  sweptAccountRows: number
  durationMs: number
}

/** `ran: false`: another run holds the cleanup lock, anywhere; nothing was done. */
export type RetentionRunOutcome = { ran: false } | { ran: true; report: RetentionRunReport }

/**
 * Cutoff of a policy: now − retentionDays × 24 h (days of 24 hours, in UTC; no calendar
 * arithmetic), or with 'day' the start of the UTC day that instant falls in.
 */
export function cutoffFor(now: Date, retentionDays: number, granularity: CutoffGranularity = 'exact'): Date {
  const exact = new Date(now.getTime() - retentionDays * dayMs)
  return granularity === 'day' ? startOfUtcDay(exact) : exact
}

/**
 * Least recently cleaned first, so a project with a backlog bigger than one run's budget cannot
 * starve the others: a partially cleaned project records its run and goes to the back of the line.
 */
function inFairOrder(policies: RetentionPolicyDto[]): RetentionPolicyDto[] {
  return [...policies].sort((a, b) => {
    if (a.lastRunAt !== b.lastRunAt) {
      if (a.lastRunAt === null) return -1
      if (b.lastRunAt === null) return 1
      return a.lastRunAt < b.lastRunAt ? -1 : 1
    }
    return a.projectId < b.projectId ? -1 : a.projectId > b.projectId ? 1 : 0
  })
}

/** How every batch of a run deletes: up to `limit` spans, their WAL compressed with `walCompression` (wal-compression.ts). */
interface BatchOptions {
  limit: number
  walCompression: WalCompression
}

/**
 * One batch, in a transaction of its own that commits without waiting for its WAL to reach disk.
 * A batch lost to a crash is harmless (those spans are still old, and the next run deletes them),
 * and not flushing after every batch keeps the janitor's fsyncs from queueing up with those of
 * concurrent ingest, whose commits do wait for theirs; it also makes small batches cheap.
 *
 * Up to `limit` of the project's oldest spans in `partition` go first; then, in the same
 * transaction, the summaries and rollups that only spans of `window` made (when given), so a
 * summary never outlives its spans' deletion nor goes before it. `window(deleted, latestStart)`
 * says which window the deletion completed.
 */
async function deleteBatch(
  db: Db, batch: BatchOptions, partition: string, projectId: string, cutoff: Date, from: Date | null,
  window: (deleted: number, latestStart: Date | null) => DeletedWindow | null,
): Promise<{ deleted: number; done: DeletedWindow | null; latestStart: Date | null }> {
  const { limit } = batch
  return db.transaction().execute(async (trx) => {
    await sql`set local synchronous_commit = off`.execute(trx)
    await compressWal(trx, batch.walCompression)
    // The spans are taken in index order, LIMIT rows at a time; were the planner to misjudge how
    // many rows are old, a bitmap scan would read all of them and sort them for every batch.
    await sql`set local enable_bitmapscan = off`.execute(trx)
    const spans = await deleteOldestSpansBefore(trx, partition, projectId, cutoff, limit, from)
    // The summaries are cut by time ranges, for which a bitmap scan is the right plan.
    await sql`set local enable_bitmapscan = on`.execute(trx)
    const done = window(spans.deleted, spans.latestStart)
    if (done !== null) await deleteSummariesOfWindow(trx, projectId, done)
    return { deleted: spans.deleted, done, latestStart: spans.latestStart }
  })
}

/** The last window of a project, up to its cutoff, when no batch of the run reached it (its spans went with a dropped partition, or earlier runs). */
async function deleteSummariesUpTo(db: Db, batch: BatchOptions, projectId: string, window: DeletedWindow): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`set local synchronous_commit = off`.execute(trx)
    await compressWal(trx, batch.walCompression)
    await deleteSummariesOfWindow(trx, projectId, window)
  })
}

/**
 * One cleanup run (docs/api.md#cleanup): under the cluster-wide cleanup lock, for every project whose
 * retention policy is enabled, deletes the spans that started before `now − retentionDays`, in
 * batches of `batchSize` rows (each its own short transaction, so concurrent ingest never waits
 * on a long-held lock and a stopped run keeps what it deleted). Projects with a disabled policy
 * or none are never touched. A project whose deletion fails is reported and the run goes on.
 * Each project finished, or partly done when the budget ran out, records lastRunAt and
 * lastDeletedSpans; a failed project or one not reached keeps its previous record.
 */
export async function runRetentionCleanup(db: Db, options: RetentionRunOptions): Promise<RetentionRunOutcome> {
  const locked = await withAdvisoryLock(db, CLEANUP_LOCK_KEY, async () => {
    const startedAt = new Date()
    const report = await runLocked(db, options)
    await recordRun(db, startedAt, report, options)
    return report
  })
  return locked.acquired ? { ran: true, report: locked.value } : { ran: false }
}

/**
 * The run in retention_runs, for the console's "last cleanup". Under the cleanup lock, so runs are
 * recorded in the order they ran. A run whose record fails is still a run: the failure is logged.
 */
async function recordRun(db: Db, startedAt: Date, report: RetentionRunReport, options: RetentionRunOptions): Promise<void> {
  const outcome = report.failedProjects > 0 ? 'failed' : report.complete ? 'complete' : 'incomplete'
  try {
    await recordCleanupRun(db, {
      startedAt, finishedAt: new Date(), trigger: options.trigger ?? 'request', outcome, deletedSpans: report.deletedSpans, droppedPartitions: report.droppedPartitions.length,
    })
  } catch (error) {
    options.log.error({ err: error }, 'retention cleanup could not record its run')
  }
}

async function runLocked(db: Db, options: RetentionRunOptions): Promise<RetentionRunReport> {
  const startedAt = performance.now()
  // Fixed once: every cutoff, and every lastRunAt of this run, derive from this instant.
  const now = options.now ?? new Date()
  const deadline = startedAt + options.timeBudgetMs
  let batches = 0
  // At least one batch per run, so even a budget smaller than one statement makes progress.
  const mustStop = () => batches > 0 && (performance.now() >= deadline || options.signal?.aborted === true)

  // Made here too, so that a deployment whose writers are all stopped still has tomorrow's; by
  // the wall clock, whatever instant the run's cutoffs are computed from.
  await ensureDayPartitions(db)
  const policies = inFairOrder(await listEnabledRetentionPolicies(db))
  const batch: BatchOptions = { limit: options.batchSize, walCompression: policies.length > 0 ? await probeWalCompression(db) : null }
  const cutoffs = new Map(policies.map((policy) => [policy.projectId, cutoffFor(now, policy.retentionDays, options.cutoffs)]))
  const droppedPartitions = await dropExpiredPartitions(db, cutoffs, { cutoffOf: (days) => cutoffFor(now, days, options.cutoffs), lockTimeoutMs: options.lockTimeoutMs ?? 1_000, log: options.log, walCompression: batch.walCompression })
  const partitions = await listDayPartitions(db, 'spans')
  const projects: ProjectCleanupReport[] = []
  let stopped = false

  for (const policy of policies) {
    const cutoff = cutoffFor(now, policy.retentionDays, options.cutoffs)
    const report: ProjectCleanupReport = {
      projectId: policy.projectId,
      retentionDays: policy.retentionDays,
      cutoff: cutoff.toISOString(),
      deletedSpans: 0,
    }
    projects.push(report)
    if (stopped || mustStop()) {
      stopped = true
      report.remaining = true
      continue
    }
    try {
      const finished = await cleanProject(db, batch, partitions, policy.projectId, cutoff, (deleted) => {
        batches += 1
        report.deletedSpans += deleted
        if (deleted > 0) options.onDeleted?.(policy.projectId, deleted)
        return mustStop()
      })
      if (!finished) {
        stopped = true
        report.remaining = true
      }
      await recordRetentionRun(db, policy.projectId, { at: now, deletedSpans: report.deletedSpans })
      options.log.info(
        { projectId: policy.projectId, cutoff: report.cutoff, deletedSpans: report.deletedSpans, remaining: report.remaining === true },
        'retention cleanup of project done',
      )
    } catch (error) {
      report.error = PROJECT_FAILURE_MESSAGE
      delete report.remaining
      options.log.error({ err: error, projectId: policy.projectId, deletedSpans: report.deletedSpans }, 'retention cleanup of project failed')
    }
  }

  return {
    complete: !stopped,
    deletedSpans: projects.reduce((sum, project) => sum + project.deletedSpans, 0),
    droppedPartitions,
    failedProjects: projects.filter((project) => project.error !== undefined).length,
    projects,
    prunedAuditEntries: await pruneAuditEntries(db, options),
    sweptAccountRows: await sweepSpentAccountRows(db, options),
    durationMs: performance.now() - startedAt,
  }
}

/**
 * The audit log's retention, in the same run (one statement through prune_audit_log, the only
 * delete the table allows; it is not held to the spans' time budget). A failure is logged and
 * the run goes on: the entries are still there for the next run.
 */
async function pruneAuditEntries(db: Db, options: RetentionRunOptions): Promise<number> {
  if (options.auditLogRetentionDays === undefined) return 0
  try {
    const pruned = await pruneAuditLog(db, options.auditLogRetentionDays)
    if (pruned > 0) options.log.info({ prunedAuditEntries: pruned, keepDays: options.auditLogRetentionDays }, 'audit log entries past retention removed')
    return pruned
  } catch (error) {
    options.log.error({ err: error }, 'audit log retention failed')
    return 0
  }
}

/** How long an ended session, a spent invitation or password reset stays (the members page shows recent ones). */
export const spentAccountRowsKeptDays = 30

/** People's spent links and ended sessions, in the same run; a failure is logged and the next run tries again. */
async function sweepSpentAccountRows(db: Db, options: RetentionRunOptions): Promise<number> {
  try {
    const swept = await deleteSpentAccountRows(db, new Date((options.now ?? new Date()).getTime() - spentAccountRowsKeptDays * dayMs))
    const total = swept.sessions + swept.invitations + swept.passwordResets
    if (total > 0) options.log.info({ swept, keptDays: spentAccountRowsKeptDays }, 'ended sessions and spent links removed')
    return total
  } catch (error) {
    options.log.error({ err: error }, 'sweeping ended sessions and spent links failed')
    return 0
  }
}

/**
 * Deletes a project's spans that started before `cutoff`, in batches, from the partitions that
 * remain: the default partition first (its spans may be of any day; their summaries go with the
 * windows of the daily partitions after it), then each day's partition from the oldest, each
 * window starting where the one before ended. Summaries whose spans all went with a dropped
 * partition go with the first window. `afterBatch` is told each batch's count and answers whether
 * to stop; false when the run stopped before the project was done.
 */
async function cleanProject(
  db: Db, batch: BatchOptions, partitions: readonly DayPartition[], projectId: string, cutoff: Date,
  afterBatch: (deleted: number) => boolean,
): Promise<boolean> {
  let from: Date | null = null
  for (const partition of partitions) {
    if (partition.day !== null && partition.day >= cutoff) break
    const end = partition.day === null ? null : dayAfter(partition.day)
    // Where this partition's next batch starts its walk of the index: the default partition keeps
    // a cursor of its own, since its rows close no window.
    let walk = from
    for (;;) {
      const { deleted, done, latestStart } = await deleteBatch(db, batch, partition.name, projectId, cutoff, walk, (count, latestStart) => {
        // The default partition's rows are of any time: they close no window.
        if (end === null) return null
        // A short batch leaves nothing before the cutoff in this partition, nor in those before it.
        const to = count < batch.limit || latestStart === null ? (end < cutoff ? end : cutoff) : latestStart
        return { from, to }
      })
      if (done !== null) from = done.to
      walk = done !== null ? done.to : latestStart
      const stop = afterBatch(deleted)
      if (deleted < batch.limit) break
      if (stop) return false
    }
  }
  if (from === null || from < cutoff) await deleteSummariesUpTo(db, batch, projectId, { from, to: cutoff })
  return true
}
