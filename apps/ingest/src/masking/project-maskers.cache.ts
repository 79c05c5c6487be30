import { listProjectMaskingRules, type Db } from '@tracewell/db'
import { maskerOf, type Masker, type MaskingRule } from '@tracewell/masking'
import type { Logger } from '@tracewell/logger'

/** The rules that apply to a project, compiled, and as given (for the decode workers). */
export interface ProjectMasking {
  masker: Masker
  rules: readonly MaskingRule[]
  /** The rules as JSON: a decode worker compiles them once per distinct text. */
  rulesJson: string
}

export interface ProjectMaskersOptions {
  db: Db
  /** MASKING_DEFAULT_RULES (defaultMaskingRules): what a project without rules of its own gets. */
  defaultRules: readonly MaskingRule[]
  /** MASKING_RULES_REFRESH_MS: how often every project's own rules are read again. */
  refreshMs: number
  logger: Logger
}

/**
 * Every project's masking rules, read from Postgres in one query every `refreshMs` (at most 5 s:
 * a changed rule applies within that on every ingest replica), compiled once per change. The
 * request path looks a project up in a map and never waits for the database; a project without
 * rules gets null and its body goes to the queue as before. When a reload fails the last rules
 * read stay in force.
 */
export class ProjectMaskers {
  readonly #options: ProjectMaskersOptions
  readonly #default: ProjectMasking | null
  #own = new Map<string, ProjectMasking | null>()
  #timer: NodeJS.Timeout | undefined
  #loading: Promise<void> | undefined
  #reportedFailure = false

  constructor(options: ProjectMaskersOptions) {
    this.#options = options
    this.#default = compiled(options.defaultRules)
  }

  /** Reads the rules once, then every refreshMs. */
  async start(): Promise<void> {
    await this.reload()
    this.#timer = setInterval(() => void this.reload(), this.#options.refreshMs)
    this.#timer.unref()
  }

  /** The masking of a project: its own rules, else the default; null when nothing is masked. */
  of(projectId: string): ProjectMasking | null {
    const own = this.#own.get(projectId)
    return own === undefined ? this.#default : own
  }

  reload(): Promise<void> {
    this.#loading ??= listProjectMaskingRules(this.#options.db)
      .then((rows) => {
        const next = new Map<string, ProjectMasking | null>()
        for (const row of rows) {
          const rulesJson = JSON.stringify(row.rules)
          const previous = this.#own.get(row.projectId)
          // Unchanged rules keep their compiled form (and its cache of which rules apply to which key).
          next.set(row.projectId, previous !== undefined && (previous?.rulesJson ?? '[]') === rulesJson ? previous : compiled(row.rules as MaskingRule[]))
        }
        this.#own = next
        this.#reportedFailure = false
      })
      .catch((error: Error) => {
        if (this.#reportedFailure) return
        this.#reportedFailure = true
        this.#options.logger.warn({ err: { message: error.message } }, 'could not reload the projects’ masking rules; the last ones read stay in force')
      })
      .finally(() => (this.#loading = undefined))
    return this.#loading
  }

  close(): void {
    clearInterval(this.#timer)
  }
}

function compiled(rules: readonly MaskingRule[]): ProjectMasking | null {
  return rules.length === 0 ? null : { masker: maskerOf(rules), rules, rulesJson: JSON.stringify(rules) }
}
