import {
  DAY_PARTITIONED_TABLES, dayAfter, deleteTriggerKeptRollupsOf, dropPartition, existingProjectIds, listDayPartitions, listEnabledRetentionPolicies, lockDayPartitionedTable, projectsInPartition, sql,
  type DayPartition, type Db, type Executor,
} from '@tracewell/db'
import type { Logger } from '@tracewell/logger'
import { compressWal, type WalCompression } from './wal-compression.ts'

export interface PartitionDropOptions {
  /** The cutoff of a policy of `retentionDays` in this run (the same `now` and granularity as the batches'). */
  cutoffOf: (retentionDays: number) => Date
  lockTimeoutMs: number
  log: Logger
  /** The drop's WAL is mostly images of catalog pages: compressed like the batches' (wal-compression.ts). */
  walCompression: WalCompression
}

/** Why a partition that looked expired was not dropped: its table's lock was busy, or a project of it (seen under the lock) keeps its rows. */
type DropOutcome = { dropped: true } | { dropped: false; busy: true } | { dropped: false; holding: string[] }

/** Thrown to roll back the drop's transaction (the scores it deleted) when the partition stays: its lock was busy, or the locked look found a project that keeps its rows. */
class PartitionKept extends Error {
  readonly outcome: Exclude<DropOutcome, { dropped: true }>
  constructor(outcome: Exclude<DropOutcome, { dropped: true }>) {
    super('the partition stays')
    this.outcome = outcome
  }
}

/**
 * Drops every day partition, of `spans` and of the summaries (day-partitions.repository.ts),
 * whose rows have all expired: each project with a row in it has an enabled policy whose cutoff is
 * at or after the end of its day. A project that no longer exists holds nothing back (no key can
 * read its rows any more); one without an enabled policy keeps its rows, and so the whole day,
 * forever. Oldest first; a day held back does not stop the check of the next (a project may have
 * stopped sending). Answers the names dropped.
 *
 * The decision is taken twice: first without a lock, so that a day some project holds back costs
 * nothing; then, for a day that looked expired, again in the drop's transaction with its table
 * locked against writes (lockDayPartitionedTable), projects and policies read anew. A writer's
 * transaction that inserted into the day, even one committing a moment before the drop, has
 * committed and is seen by that second look, or starts after the drop (issue 48 §3).
 *
 * A drop writes a few catalog rows to the WAL, whatever the rows of the partition: this is what
 * makes a day's expiry cheap (docs/operations.md#partitions). The scores of a dropped day's traces
 * and sessions go in the same transaction (row by row: they are as many as users and evaluators
 * gave, not as the spans), before the lock so that they do not lengthen it.
 */
export async function dropExpiredPartitions(db: Db, cutoffs: ReadonlyMap<string, Date>, options: PartitionDropOptions): Promise<string[]> {
  const latestCutoff = Math.max(...[...cutoffs.values()].map((cutoff) => cutoff.getTime()))
  const dropped: string[] = []
  for (const table of DAY_PARTITIONED_TABLES) {
    for (const partition of await listDayPartitions(db, table)) {
      if (partition.day === null) continue
      const end = dayAfter(partition.day)
      // No policy can have expired a day that ends after the latest cutoff.
      if (end.getTime() > latestCutoff) break
      const projects = await projectsInPartition(db, partition.name)
      if ((await holdingProjects(db, projects, end, cutoffs)).length > 0) continue
      const outcome = await dropIfStillExpired(db, partition, projects, end, options)
      if (outcome.dropped) {
        dropped.push(partition.name)
        options.log.info({ partition: partition.name, projects: projects.length }, 'retention cleanup dropped a day partition')
      } else if ('busy' in outcome) {
        options.log.info({ partition: partition.name, lockTimeoutMs: options.lockTimeoutMs }, 'retention cleanup left a day partition for the next run: its lock was busy')
      } else {
        options.log.info({ partition: partition.name, holding: outcome.holding }, 'retention cleanup kept a day partition: rows of a project that keeps them arrived before the drop')
      }
    }
  }
  return dropped
}

/** The projects of `projects` that keep their rows of a day ending at `end`: they exist, and no enabled policy's cutoff has passed the day. */
async function holdingProjects(db: Executor, projects: readonly string[], end: Date, cutoffs: ReadonlyMap<string, Date>): Promise<string[]> {
  const live = await existingProjectIds(db, projects)
  return projects.filter((id) => live.has(id) && !((cutoffs.get(id)?.getTime() ?? -Infinity) >= end.getTime()))
}

/**
 * The drop's transaction: the scores of the projects first seen, then the table's lock, then the
 * locked look at the partition's projects and the policies; the drop only when none keeps its rows.
 */
async function dropIfStillExpired(db: Db, partition: DayPartition, seen: readonly string[], end: Date, options: PartitionDropOptions): Promise<DropOutcome> {
  try {
    return await db.transaction().execute(async (trx): Promise<DropOutcome> => {
      await sql`set local synchronous_commit = off`.execute(trx)
      await compressWal(trx, options.walCompression)
      await deleteScoresOf(trx, partition, seen)
      if (!(await lockDayPartitionedTable(trx, partition.table, options.lockTimeoutMs))) throw new PartitionKept({ dropped: false, busy: true })
      const cutoffs = new Map((await listEnabledRetentionPolicies(trx)).map((policy) => [policy.projectId, options.cutoffOf(policy.retentionDays)]))
      const projects = await projectsInPartition(trx, partition.name)
      const holding = await holdingProjects(trx, projects, end, cutoffs)
      if (holding.length > 0) throw new PartitionKept({ dropped: false, holding })
      await deleteScoresOf(trx, partition, projects.filter((id) => !seen.includes(id)))
      if (partition.table === 'usage_rollups' && partition.day !== null) await deleteTriggerKeptRollupsOf(trx, partition.day)
      if (!(await dropPartition(trx, partition.name, options.lockTimeoutMs))) throw new PartitionKept({ dropped: false, busy: true })
      return { dropped: true }
    })
  } catch (error) {
    if (error instanceof PartitionKept) return error.outcome
    // The lock timeout holds for the rest of the transaction: a row lock of a score, say, waited on too long.
    if ((error as { code?: unknown }).code === '55P03') return { dropped: false, busy: true }
    throw error
  }
}

/**
 * The scores of the traces or the sessions of a summary partition about to be dropped, for the
 * projects that have scores of that kind at all (most days of most projects have none, and then the
 * partition is not read), each found through the scores' index.
 */
async function deleteScoresOf(trx: Executor, partition: DayPartition, projects: readonly string[]): Promise<void> {
  if (projects.length === 0) return
  if (partition.table !== 'trace_summaries' && partition.table !== 'session_summaries') return
  const ofTraces = partition.table === 'trace_summaries'
  const { rows: scored } = await sql<{ id: string }>`
    select p.id from unnest(${projects}::text[]) as p(id)
    where exists (select 1 from scores x where x.project_id = p.id and ${ofTraces ? sql`x.trace_id is not null` : sql`x.trace_id is null and x.session_id is not null`})`.execute(trx)
  if (scored.length === 0) return
  const rows = sql.id(partition.name)
  const scoresOfRow = ofTraces
    ? sql`x.project_id = t.project_id and x.trace_id = t.trace_id`
    : sql`x.project_id = t.project_id and x.session_id = t.session_id and x.trace_id is null`
  await sql`
    delete from scores s where s.id in (
      select x.id from ${rows} t cross join lateral (select x.id from scores x where ${scoresOfRow} offset 0) as x
      where t.project_id = any(${scored.map((row) => row.id)}::text[]))`.execute(trx)
}
