import { dayOfPartition, sql, type DayPartitionedTable, type Executor } from '@tracewell/db'
import { KeyFilter } from './key-filter.ts'

// Where the summariser looks for a trace's or a session's stored row. trace_summaries and
// session_summaries are partitioned by fold_day, the day the summariser last wrote the row
// (day-partitions.repository.ts in @tracewell/db), and it writes only into today's partition: a
// day before today is sealed, it never gains a key again (it only loses rows, to the janitor or
// to a row moved to today). So each sealed day's keys are read once, into a filter kept for as
// long as the day's partition exists, and a key is looked up in today's partition (by index) and
// in the sealed days whose filter may hold it — not in every day of the retention, which would
// cost a probe of each day's index for every new trace.
//
// Why yesterday is sealed as soon as the fold's day is today: the summariser's "today" is the
// database's clock read once its fold holds the fold's lock (summary-fold.ts), and only a fold
// holding that lock adds rows to these tables. So a fold that reads a day D has seen every fold
// of D - 1 commit before it: none can still be writing into yesterday. (Until 2026-12-06 yesterday
// was probed by index too, a second probe for every trace: 2.4 of a new trace's 4.9 buffer hits
// looking it up, docs/benchmarks.md.) The filters are per process: a writer started today reads
// yesterday's keys at its first fold, as it reads every sealed day's.

/** Filter keys: a trace and a session of trace_summaries, a session of session_summaries. */
export const traceKey = (projectId: string, traceId: string): string => `t\u0000${projectId}\u0000${traceId}`
export const sessionKey = (projectId: string, sessionId: string): string => `s\u0000${projectId}\u0000${sessionId}`

export class SealedSummaryDays {
  /** By table, each sealed day's filter (YYYY-MM-DD → filter). */
  private readonly days = new Map<DayPartitionedTable, Map<string, KeyFilter>>([
    ['trace_summaries', new Map()],
    ['session_summaries', new Map()],
  ])

  private today = ''

  /**
   * Brings the filters up to `today` (the fold's UTC day, YYYY-MM-DD): reads the keys of every
   * day that became sealed since the last call, and forgets the days whose rows are gone.
   */
  async refresh(db: Executor, today: string): Promise<void> {
    this.today = today
    const sealed = await sealedDays(db, today)
    for (const [table, filters] of this.days) {
      const days = sealed.get(table) ?? new Set()
      for (const day of filters.keys()) if (!days.has(day)) filters.delete(day)
      for (const day of days) if (!filters.has(day)) filters.set(day, await filterOfDay(db, table, day))
    }
  }

  /** The days to look for a trace's summary in: today, then the sealed days that may hold it. */
  traceDays(projectId: string, traceId: string): string[] {
    return this.daysOf('trace_summaries', traceKey(projectId, traceId))
  }

  /** The days to look for the traces of a session in. */
  sessionTraceDays(projectId: string, sessionId: string): string[] {
    return this.daysOf('trace_summaries', sessionKey(projectId, sessionId))
  }

  /** The days to look for a session's own row in. */
  sessionDays(projectId: string, sessionId: string): string[] {
    return this.daysOf('session_summaries', sessionKey(projectId, sessionId))
  }

  private daysOf(table: DayPartitionedTable, key: string): string[] {
    const days = [this.today]
    for (const [day, filter] of this.days.get(table)!) if (filter.mayHave(key)) days.push(day)
    return days
  }
}

/**
 * The sealed days that hold rows, by table: the day partitions before `sealedBefore`, and the days
 * of the rows the default partitions hold from before it (normally none: the partitions are made
 * days ahead). One query, since every fold asks.
 */
async function sealedDays(db: Executor, sealedBefore: string): Promise<Map<DayPartitionedTable, Set<string>>> {
  const { rows } = await sql<{ table: DayPartitionedTable; name: string | null; day: string | null }>`
    select p.relname::text as table, c.relname::text as name, null as day
    from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
    where i.inhparent in ('trace_summaries'::regclass, 'session_summaries'::regclass)
    union all
    select distinct 'trace_summaries', null, fold_day::text from trace_summaries_default where fold_day < ${sealedBefore}::date
    union all
    select distinct 'session_summaries', null, fold_day::text from session_summaries_default where fold_day < ${sealedBefore}::date`.execute(db)
  const sealed = new Map<DayPartitionedTable, Set<string>>()
  for (const row of rows) {
    const day = row.day ?? dayOfPartition(row.table, row.name ?? '')?.toISOString().slice(0, 10) ?? null
    if (day === null || day >= sealedBefore) continue
    if (!sealed.has(row.table)) sealed.set(row.table, new Set())
    sealed.get(row.table)!.add(day)
  }
  return sealed
}

/** A filter of every key a sealed day of `table` holds: its traces and their sessions, or its sessions. */
async function filterOfDay(db: Executor, table: DayPartitionedTable, day: string): Promise<KeyFilter> {
  if (table === 'trace_summaries') {
    const { rows } = await sql<{ project_id: string; trace_id: string; session_id: string | null }>`
      select project_id, trace_id, session_id from trace_summaries where fold_day = ${day}::date`.execute(db)
    const filter = new KeyFilter(rows.length * 2)
    for (const row of rows) {
      filter.add(traceKey(row.project_id, row.trace_id))
      if (row.session_id !== null) filter.add(sessionKey(row.project_id, row.session_id))
    }
    return filter
  }
  const { rows } = await sql<{ project_id: string; session_id: string }>`
    select project_id, session_id from session_summaries where fold_day = ${day}::date`.execute(db)
  const filter = new KeyFilter(rows.length)
  for (const row of rows) filter.add(sessionKey(row.project_id, row.session_id))
  return filter
}
