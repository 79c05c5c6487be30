import { Counter, Histogram, type Registry } from 'prom-client'
import type { RetentionRunOutcome } from './retention-run.ts'

export const RunOutcomes = {
  complete: 'complete',
  /** Stopped by the time budget (or shutdown); the next call continues. */
  incomplete: 'incomplete',
  /** At least one project failed, or the run could not start (e.g. the database is down). */
  failed: 'failed',
  /** Another run held the cleanup lock: the call was answered 409. */
  busy: 'busy',
} as const
export type RunOutcome = (typeof RunOutcomes)[keyof typeof RunOutcomes]

export interface CleanupMetrics {
  deletedSpans: Counter
  runDuration: Histogram
  runFailures: Counter
  runs: Counter<'outcome'>
}

// The all-in-one app may register the cleanup routes more than once into one registry (e.g. in
// tests); prom-client refuses a second metric of the same name, so an existing one is reused.
function existing<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create()
}

export function cleanupMetrics(registry: Registry): CleanupMetrics {
  return {
    deletedSpans: existing(registry, 'tracewell_janitor_deleted_spans_total', () => new Counter({
      name: 'tracewell_janitor_deleted_spans_total',
      // Not by project: project ids are unbounded as a label set. Each run's answer and its log
      // line give the deletions per project.
      help: 'Spans deleted by retention cleanup',
      registers: [registry],
    })),
    runDuration: existing(registry, 'tracewell_janitor_run_duration_seconds', () => new Histogram({
      name: 'tracewell_janitor_run_duration_seconds',
      help: 'Duration of retention cleanup runs that took the lock, in seconds',
      buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 120, 240, 600],
      registers: [registry],
    })),
    runFailures: existing(registry, 'tracewell_janitor_run_failures_total', () => new Counter({
      name: 'tracewell_janitor_run_failures_total',
      help: 'Retention cleanup runs answered 500 (a project failed, or the run could not start)',
      registers: [registry],
    })),
    runs: existing(registry, 'tracewell_janitor_runs_total', () => new Counter({
      name: 'tracewell_janitor_runs_total',
      help: 'Retention cleanup calls by outcome: complete, incomplete (time budget), failed, busy (409)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    })),
  }
}

/** Counts a run, whoever started it: its outcome, or `'error'` when it could not start or list the policies (e.g. the database is down). */
export function countRun(metrics: CleanupMetrics, outcome: RetentionRunOutcome | 'error'): void {
  if (outcome === 'error') {
    metrics.runs.inc({ outcome: RunOutcomes.failed })
    metrics.runFailures.inc()
    return
  }
  if (!outcome.ran) {
    metrics.runs.inc({ outcome: RunOutcomes.busy })
    return
  }
  const { report } = outcome
  metrics.runDuration.observe(report.durationMs / 1000)
  if (report.failedProjects > 0) {
    metrics.runs.inc({ outcome: RunOutcomes.failed })
    metrics.runFailures.inc()
    return
  }
  metrics.runs.inc({ outcome: report.complete ? RunOutcomes.complete : RunOutcomes.incomplete })
}
