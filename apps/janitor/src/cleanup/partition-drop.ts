import { dayAfter, dropSpanPartition, existingProjectIds, listSpanPartitions, projectsInSpanPartition, sql, type Db } from '@tracewell/db'
import type { RunLogger } from './retention-run.ts'
import { compressWal, type WalCompression } from './wal-compression.ts'

export interface PartitionDropOptions {
  lockTimeoutMs: number
  log: RunLogger
  /** The drop's WAL is mostly images of catalog pages: compressed like the batches' (wal-compression.ts). */
  walCompression: WalCompression
}

/**
 * Drops every day partition of `spans` whose spans have all expired: each project with a span in
 * it has an enabled policy whose cutoff is at or after the end of its day. A project that no longer
 * exists holds nothing back (no key can read its spans any more); one without an enabled policy
 * keeps its spans, and so the whole day, forever. Oldest first; a day held back does not stop the
 * check of the next (a project may have stopped sending). Answers the names dropped.
 *
 * A drop writes a few catalog rows to the WAL, whatever the rows of the partition: this is what
 * makes a day's expiry cheap (docs/operations.md#partitions). The summaries of those spans go
 * with each project's first window (retention-run.ts).
 */
export async function dropExpiredPartitions(db: Db, cutoffs: ReadonlyMap<string, Date>, options: PartitionDropOptions): Promise<string[]> {
  const latestCutoff = Math.max(...[...cutoffs.values()].map((cutoff) => cutoff.getTime()))
  const dropped: string[] = []
  for (const partition of await listSpanPartitions(db)) {
    if (partition.day === null) continue
    const end = dayAfter(partition.day)
    // No policy can have expired a day that ends after the latest cutoff.
    if (end.getTime() > latestCutoff) break
    const projects = await projectsInSpanPartition(db, partition.name)
    const live = await existingProjectIds(db, projects)
    const holding = projects.filter((id) => live.has(id) && !((cutoffs.get(id)?.getTime() ?? -Infinity) >= end.getTime()))
    if (holding.length > 0) continue
    const gone = await db.transaction().execute(async (trx) => {
      await sql`set local synchronous_commit = off`.execute(trx)
      await compressWal(trx, options.walCompression)
      return dropSpanPartition(trx, partition.name, options.lockTimeoutMs)
    })
    if (gone) {
      dropped.push(partition.name)
      options.log.info({ partition: partition.name, projects: projects.length }, 'retention cleanup dropped a day partition of spans')
    } else {
      options.log.info({ partition: partition.name, lockTimeoutMs: options.lockTimeoutMs }, 'retention cleanup left a day partition for the next run: its lock was busy')
    }
  }
  return dropped
}
