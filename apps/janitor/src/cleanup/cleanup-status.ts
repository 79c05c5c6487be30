import { nextScheduledRun, NO_SCHEDULE } from './retention-schedule.ts'

/** What /readyz says of the cleanup under `details.cleanup`, and the console's retention panel of the process that serves it. */
export interface CleanupDetails {
  /** `open`: CRON_API_KEY is unset and anyone who can reach the service may run the cleanup. */
  endpoint: 'open' | 'cron-api-key'
  /** RETENTION_SCHEDULE where this process runs the cleanup itself; null where a CronJob calls it. */
  schedule: string | null
  nextRunAt: string | null
  warning?: string
}

export const OPEN_ENDPOINT_WARNING = 'CRON_API_KEY is not set: /api/cron/cleanup-traces is open to anyone who can reach this service; set it in production'

/** `schedule`: RETENTION_SCHEDULE (`npm start`), or undefined for the janitor service. */
export function cleanupDetails(cronApiKey: string | undefined, schedule: string | undefined): CleanupDetails {
  const own = schedule === undefined || schedule === NO_SCHEDULE ? null : schedule
  const open = cronApiKey === undefined || cronApiKey === ''
  return {
    endpoint: open ? 'open' : 'cron-api-key',
    schedule: own,
    nextRunAt: own === null ? null : (nextScheduledRun(own)?.toISOString() ?? null),
    ...(open ? { warning: OPEN_ENDPOINT_WARNING } : {}),
  }
}
