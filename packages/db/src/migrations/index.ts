import type { Migration } from 'kysely'

export type LazyMigration = Migration & { transactional?: boolean }

/** A migration whose module is imported the first time it runs. */
function lazy(load: () => Promise<Migration>, options: { transactional?: false } = {}): LazyMigration {
  return {
    async up(db) {
      await (await load()).up(db)
    },
    async down(db) {
      await (await load()).down?.(db)
    },
    ...options,
  }
}

// Every migration, by name; names sort in the order they apply. Listed statically (not read from
// the file system) so that the same list works from source, from a container image and in tests.
// A migration exporting `transactional = false` runs outside a transaction (migrator.ts), and says
// so here too (migrations-index.test.ts checks the two agree).
//
// Each is imported when it runs, not with this list: every service checks at boot that the schema
// is current, which needs the names only, and the migrations with their frozen copies held ~45 MiB
// of an idle service's memory run from sources (docs/benchmarks.md).
//
// migrationsThatPauseWriters: those that fill new columns or tables from the spans already stored.
// A writer storing spans meanwhile (of the previous version, which knows nothing of them) would
// leave its spans out of what they fill, so `npm run migrate` pauses the writers' queue around
// them (docs/operations.md#migrations). 2026-11-26T2330-spans-by-day is not one: it mirrors what
// writers store meanwhile with triggers, and is built to run beside them.
export const migrations: Record<string, LazyMigration> = {
  '2026-11-22T0300-initial-schema': lazy(() => import('./2026-11-22T0300-initial-schema.ts')),
  '2026-11-24T0900-prompt-labels': lazy(() => import('./2026-11-24T0900-prompt-labels.ts')),
  '2026-11-24T1000-llm-columns-and-cost': lazy(() => import('./2026-11-24T1000-llm-columns-and-cost.ts'), { transactional: false }),
  '2026-11-24T1100-trace-summaries': lazy(() => import('./2026-11-24T1100-trace-summaries.ts')),
  '2026-11-25T0400-agent-span-totals': lazy(() => import('./2026-11-25T0400-agent-span-totals.ts')),
  '2026-11-25T0500-usage-rollups': lazy(() => import('./2026-11-25T0500-usage-rollups.ts')),
  '2026-11-25T0510-session-summaries': lazy(() => import('./2026-11-25T0510-session-summaries.ts')),
  '2026-11-25T1800-trace-text-filters': lazy(() => import('./2026-11-25T1800-trace-text-filters.ts')),
  '2026-11-26T0900-summary-deltas': lazy(() => import('./2026-11-26T0900-summary-deltas.ts')),
  '2026-11-26T1200-console-session-revocations': lazy(() => import('./2026-11-26T1200-console-session-revocations.ts')),
  '2026-11-26T1400-scores': lazy(() => import('./2026-11-26T1400-scores.ts')),
  '2026-11-26T1410-llm-judge': lazy(() => import('./2026-11-26T1410-llm-judge.ts')),
  '2026-11-26T2300-project-ingest-limits': lazy(() => import('./2026-11-26T2300-project-ingest-limits.ts')),
  '2026-11-26T2310-unknown-token-counts': lazy(() => import('./2026-11-26T2310-unknown-token-counts.ts')),
  '2026-11-26T2311-estimated-tokens': lazy(() => import('./2026-11-26T2311-estimated-tokens.ts')),
  '2026-11-26T2330-spans-by-day': lazy(() => import('./2026-11-26T2330-spans-by-day.ts'), { transactional: false }),
  '2026-11-26T2340-datasets-experiments': lazy(() => import('./2026-11-26T2340-datasets-experiments.ts')),
  '2026-11-27T0100-summaries-by-day': lazy(() => import('./2026-11-27T0100-summaries-by-day.ts')),
  '2026-11-27T0600-text-blocks': lazy(() => import('./2026-11-27T0600-text-blocks.ts'), { transactional: false }),
  '2026-12-06T0150-retention-runs': lazy(() => import('./2026-12-06T0150-retention-runs.ts')),
  '2026-12-06T0160-judge-inputs': lazy(() => import('./2026-12-06T0160-judge-inputs.ts')),
  '2026-12-06T0170-project-masking-rules': lazy(() => import('./2026-12-06T0170-project-masking-rules.ts')),
  '2026-12-06T0180-erasures': lazy(() => import('./2026-12-06T0180-erasures.ts')),
  '2026-12-06T0210-monitors': lazy(() => import('./2026-12-06T0210-monitors.ts')),
  '2026-12-06T0220-notification-channels': lazy(() => import('./2026-12-06T0220-notification-channels.ts')),
  '2026-12-06T0230-dashboards': lazy(() => import('./2026-12-06T0230-dashboards.ts')),
  '2026-12-06T0600-accounts': lazy(() => import('./2026-12-06T0600-accounts.ts')),
  '2026-12-06T0610-label-moves-by-person': lazy(() => import('./2026-12-06T0610-label-moves-by-person.ts')),
  '2026-12-06T0620-invitations': lazy(() => import('./2026-12-06T0620-invitations.ts')),
  '2026-12-06T0630-single-sign-on': lazy(() => import('./2026-12-06T0630-single-sign-on.ts')),
  '2026-12-06T0640-audit-log': lazy(() => import('./2026-12-06T0640-audit-log.ts')),
  '2026-12-06T0650-collaboration': lazy(() => import('./2026-12-06T0650-collaboration.ts')),
  '2026-12-06T0700-trace-rollups': lazy(() => import('./2026-12-06T0700-trace-rollups.ts')),
  '2026-12-06T0710-active-days': lazy(() => import('./2026-12-06T0710-active-days.ts')),
  '2026-12-06T0720-member-rollup-index': lazy(() => import('./2026-12-06T0720-member-rollup-index.ts')),
  '2026-12-06T0800-sort-indexes-both-ways': lazy(() => import('./2026-12-06T0800-sort-indexes-both-ways.ts')),
  '2026-12-06T0801-summary-deltas-as-text': lazy(() => import('./2026-12-06T0801-summary-deltas-as-text.ts')),
  '2026-12-06T0820-user-day-figures': lazy(() => import('./2026-12-06T0820-user-day-figures.ts')),
  '2026-12-06T1500-session-figures': lazy(() => import('./2026-12-06T1500-session-figures.ts')),
  '2026-12-06T1600-settled-session-figures': lazy(() => import('./2026-12-06T1600-settled-session-figures.ts')),
  '2026-12-06T1610-user-week-figures': lazy(() => import('./2026-12-06T1610-user-week-figures.ts')),
  '2026-12-06T1620-trace-shapes': lazy(() => import('./2026-12-06T1620-trace-shapes.ts')),
  '2026-12-06T1621-user-day-hours': lazy(() => import('./2026-12-06T1621-user-day-hours.ts')),
  '2026-12-06T2140-trace-shape-width': lazy(() => import('./2026-12-06T2140-trace-shape-width.ts')),
  '2026-12-06T2200-score-trace-dimensions': lazy(() => import('./2026-12-06T2200-score-trace-dimensions.ts')),
  '2026-12-07T0100-group-member-days': lazy(() => import('./2026-12-07T0100-group-member-days.ts')),
  '2026-12-07T0110-judgment-trace-dimensions': lazy(() => import('./2026-12-07T0110-judgment-trace-dimensions.ts')),
  '2026-12-07T0111-score-dimensions-unknown-by-time': lazy(() => import('./2026-12-07T0111-score-dimensions-unknown-by-time.ts')),
  '2026-12-07T0400-users-without-session': lazy(() => import('./2026-12-07T0400-users-without-session.ts')),
  '2026-12-07T1700-spans-lz4': lazy(() => import('./2026-12-07T1700-spans-lz4.ts'), { transactional: false }),
}

export const migrationsThatPauseWriters: ReadonlySet<string> = new Set([
  '2026-11-24T1000-llm-columns-and-cost',
  '2026-11-24T1100-trace-summaries',
  '2026-11-25T0500-usage-rollups',
  '2026-11-25T0510-session-summaries',
  '2026-11-25T1800-trace-text-filters',
  '2026-11-26T0900-summary-deltas',
  // A writer of the previous version folds unknown counts as 0, and its summariser adds to a
  // nulled rollup as null + n = null: it must not run between these and the new writers.
  '2026-11-26T2310-unknown-token-counts',
  '2026-11-26T2311-estimated-tokens',
  // A summariser of the previous version would fold traces without their error and duration
  // figures, prompts, tags and session rows.
  '2026-12-06T0700-trace-rollups',
  // A summariser of the previous version would fold traces without their rows of the day.
  '2026-12-06T0710-active-days',
  // A summariser of the previous version would fold traces without their figures in the users' rows of the day.
  '2026-12-06T0820-user-day-figures',
  // Its backfill reads the session rows before its trigger keeps them: a fold between the two would be lost.
  '2026-12-06T1500-session-figures',
  // Its backfill reads the users' rows of the day before its trigger keeps them: a fold between the two would be lost.
  '2026-12-06T1610-user-week-figures',
  // A summariser of the previous version would fold traces without their shape's rows.
  '2026-12-06T1620-trace-shapes',
  // A summariser of the previous version would fold traces without their hour in the users' rows of the day.
  '2026-12-06T1621-user-day-hours',
  // A summariser of the previous version would leave the scores' rows with their trace's former dimensions.
  '2026-12-06T2200-score-trace-dimensions',
  // Its build reads every settled day's summaries with their writers locked out (107 s at ten million spans).
  '2026-12-07T0100-group-member-days',
  // A summariser of the previous version would leave the judgments' rows with their trace's former dimensions.
  '2026-12-07T0110-judgment-trace-dimensions',
  // Its build reads the settled days' summaries without a session with their writers locked out.
  '2026-12-07T0400-users-without-session',
])
