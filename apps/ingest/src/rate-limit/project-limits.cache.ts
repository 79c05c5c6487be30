import { listProjectIngestLimits, type Db } from '@tracewell/db'
import type { SpanRateLimit } from '@tracewell/queue'
import type { Logger } from '@tracewell/logger'

export interface ProjectLimitsOptions {
  db: Db
  /** The settings' default (defaultIngestRateLimit); null: no limit unless a project has its own. */
  defaultLimit: SpanRateLimit | null
  /** INGEST_RATE_LIMIT_REFRESH_MS: how often every project's own limit is read again. */
  refreshMs: number
  logger: Logger
}

/**
 * Every project's own ingest limit, read from Postgres in one query every `refreshMs` (a row per
 * project that has its own limit: a small table), so that the request path looks a limit up in a
 * map and never waits for the database. A changed limit applies within `refreshMs` on every
 * ingest replica. When a reload fails the last limits read stay in force.
 */
export class ProjectLimits {
  readonly #options: ProjectLimitsOptions
  #own = new Map<string, SpanRateLimit | null>()
  #timer: NodeJS.Timeout | undefined
  #loading: Promise<void> | undefined
  #reportedFailure = false

  constructor(options: ProjectLimitsOptions) {
    this.#options = options
  }

  /** Reads the limits once, then every refreshMs. */
  async start(): Promise<void> {
    await this.reload()
    this.#timer = setInterval(() => void this.reload(), this.#options.refreshMs)
    this.#timer.unref()
  }

  /** The limit of a project: its own, else the default; null when it has none. */
  limitOf(projectId: string): SpanRateLimit | null {
    const own = this.#own.get(projectId)
    return own === undefined ? this.#options.defaultLimit : own
  }

  /** Whether some project may be limited (so that ingest asks for buckets only then). */
  get anyLimit(): boolean {
    return this.#options.defaultLimit !== null || [...this.#own.values()].some((limit) => limit !== null)
  }

  reload(): Promise<void> {
    this.#loading ??= listProjectIngestLimits(this.#options.db)
      .then((rows) => {
        this.#own = new Map(
          rows.map((row) => [row.projectId, row.spansPerSecond === null || row.burst === null ? null : { spansPerSecond: row.spansPerSecond, burst: row.burst }]),
        )
        this.#reportedFailure = false
      })
      .catch((error: Error) => {
        if (this.#reportedFailure) return
        this.#reportedFailure = true
        this.#options.logger.warn({ err: { message: error.message } }, 'could not reload the projects’ ingest limits; the last ones read stay in force')
      })
      .finally(() => (this.#loading = undefined))
    return this.#loading
  }

  close(): void {
    clearInterval(this.#timer)
  }
}
