import { isDatabaseUnavailable, sql, withStatementTimeout, type Db, type Executor } from '@tracewell/db'

/**
 * The query routes' reads from a streaming replica (DATABASE_READ_URL), without ever showing a
 * caller less than what it wrote: every write this process answers records the primary's WAL
 * position, and a read goes to the replica only once the replica has replayed up to it, else to
 * the primary. A replica that is down, or that cancels a read for a conflict with its recovery,
 * is left for the primary too: reads are slower then, never failed.
 */
export class ReplicaReads {
  readonly #primary: Db
  readonly #replica: Db
  /** The primary's WAL position after this process's latest write, or null before any. */
  #writtenLsn: string | null = null
  /** Reads answered by each, for /metrics. */
  readonly served = { replica: 0, primary: 0 }

  constructor(primary: Db, replica: Db) {
    this.#primary = primary
    this.#replica = replica
  }

  /** Called once a write has committed, before its answer is sent. */
  async recordWrite(): Promise<void> {
    const { rows } = await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(this.#primary)
    const lsn = rows[0]?.lsn
    // Responses may finish out of order: keep the furthest position.
    if (lsn !== undefined && (this.#writtenLsn === null || lsnValue(lsn) > lsnValue(this.#writtenLsn))) this.#writtenLsn = lsn
  }

  /** `work` under the statement timeout, on the replica when it has caught up with this process's writes. */
  async read<T>(timeoutMs: number, work: (executor: Executor) => Promise<T>): Promise<T> {
    const writtenLsn = this.#writtenLsn
    try {
      const result = await withStatementTimeout(this.#replica, timeoutMs, async (executor) => {
        if (writtenLsn !== null) {
          // NULL (not a standby, or nothing replayed) counts as behind.
          const { rows } = await sql<{ caught_up: boolean | null }>`select pg_last_wal_replay_lsn() >= ${writtenLsn}::pg_lsn as caught_up`.execute(executor)
          if (rows[0]?.caught_up !== true) throw new ReplicaBehind()
        }
        return work(executor)
      })
      this.served.replica++
      return result
    } catch (error) {
      if (!(error instanceof ReplicaBehind) && !isDatabaseUnavailable(error) && !isRecoveryConflict(error)) throw error
      this.served.primary++
      return withStatementTimeout(this.#primary, timeoutMs, work)
    }
  }
}

class ReplicaBehind extends Error {
  override name = 'ReplicaBehind'
}

/** A hot standby cancels a read whose rows its replay must remove (SQLSTATE 40001, "conflict with recovery"). */
const isRecoveryConflict = (error: unknown): boolean =>
  (error as { code?: unknown }).code === '40001' && /conflict with recovery/.test((error as Error).message)

/** An LSN (`16/B374D848`) as a number: high and low 32-bit halves, exact below 2^53. */
const lsnValue = (lsn: string): number => {
  const [high = '0', low = '0'] = lsn.split('/')
  return Number.parseInt(high, 16) * 2 ** 32 + Number.parseInt(low, 16)
}
