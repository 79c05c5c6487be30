import { Cron } from 'croner'
import { latestCleanupRun, listEnabledRetentionPolicies, type Db } from '@tracewell/db'
import type { Logger } from '@tracewell/logger'
import { runRetentionCleanup, type RetentionRunOptions, type RetentionRunOutcome } from './retention-run.ts'

/** RETENTION_SCHEDULE's value for no schedule of its own (an outside scheduler calls the endpoint). */
export const NO_SCHEDULE = 'off'

/**
 * The next time `schedule` (a cron expression, in UTC like every cutoff) fires after `from`; null
 * for `off`, or a schedule that never fires again. packages/config has checked the expression.
 */
export function nextScheduledRun(schedule: string, from: Date = new Date()): Date | null {
  if (schedule === NO_SCHEDULE) return null
  const cron = new Cron(schedule, { paused: true, timezone: 'UTC' })
  try {
    return cron.nextRun(from)
  } finally {
    cron.stop()
  }
}

export interface RetentionScheduleOptions {
  /** RETENTION_SCHEDULE, not `off`. */
  schedule: string
  /** What every run is given but its trigger (always 'schedule') and its logger. */
  run: Omit<RetentionRunOptions, 'trigger' | 'log'>
  log: Logger
  /** Told each run's outcome, or 'error' when a run could not start (metrics). */
  onRun?: (outcome: RetentionRunOutcome | 'error') => void
  /** Told the next run's time at start and after every run (the status the console reads). */
  onScheduled?: (nextRunAt: Date | null) => Promise<void>
}

export interface RetentionSchedule {
  /** Stops the schedule and waits for a run in progress (`run.signal` is what stops it between two batches). */
  stop(): Promise<void>
}

/**
 * Runs the retention cleanup on `schedule`, for `npm start` and the all-in-one image, which have no
 * CronJob to call their endpoint (issue 46 §4). Each run takes the cleanup lock like a call of the
 * endpoint, so one runs at a time across every process on the database; a tick that finds it
 * taken does nothing. A run stopped by the time budget is followed at once by another, until the
 * backlog is done: in process nothing waits for an answer. A start that finds the last run older
 * than the schedule's last firing (the machine was off at 03:00) runs one straight away.
 */
export function startRetentionSchedule(db: Db, options: RetentionScheduleOptions): RetentionSchedule {
  let running: Promise<void> | null = null
  let stopped = false
  const job = new Cron(options.schedule, { timezone: 'UTC' }, () => void runNow())

  function runNow(): Promise<void> {
    if (stopped) return Promise.resolve()
    running ??= runUntilDone().finally(() => (running = null))
    return running
  }

  async function runUntilDone(): Promise<void> {
    for (;;) {
      let outcome: RetentionRunOutcome
      try {
        outcome = await runRetentionCleanup(db, { ...options.run, log: options.log, trigger: 'schedule' })
      } catch (error) {
        options.log.error({ err: error }, 'scheduled retention cleanup failed')
        options.onRun?.('error')
        break
      }
      options.onRun?.(outcome)
      if (!outcome.ran) {
        options.log.info({}, 'scheduled retention cleanup skipped: another run holds the cleanup lock')
        break
      }
      const { report } = outcome
      options.log.info({ deletedSpans: report.deletedSpans, droppedPartitions: report.droppedPartitions.length, complete: report.complete, failedProjects: report.failedProjects }, 'scheduled retention cleanup done')
      if (report.complete || report.failedProjects > 0 || stopped || options.run.signal?.aborted === true) break
    }
    await announce()
  }

  async function announce(): Promise<void> {
    try {
      await options.onScheduled?.(job.nextRun())
    } catch (error) {
      options.log.error({ err: error }, 'could not record the next retention cleanup')
    }
  }

  const starting = (async () => {
    await announce()
    try {
      if (await missedARun(db, options.schedule)) {
        options.log.info({}, 'retention cleanup runs now: a scheduled run was missed while Tracewell was stopped')
        await runNow()
      }
    } catch (error) {
      options.log.error({ err: error }, 'could not tell whether a scheduled retention cleanup was missed')
    }
  })()

  return {
    async stop() {
      stopped = true
      job.stop()
      await starting
      await running
    },
  }
}

/**
 * Whether the schedule fired since the last run began (none ran since), or no run was ever recorded
 * while a policy waits for one (a database from before the schedule, retention saved and never
 * applied). A database without a policy has nothing to catch up on.
 */
async function missedARun(db: Db, schedule: string): Promise<boolean> {
  const last = await latestCleanupRun(db)
  if (last === null) return (await listEnabledRetentionPolicies(db)).length > 0
  const due = nextScheduledRun(schedule, new Date(last.startedAt))
  return due !== null && due.getTime() <= Date.now()
}
