import type { Migration } from 'kysely'
import * as initialSchema from './2026-11-22T0300-initial-schema.ts'
import * as promptLabels from './2026-11-24T0900-prompt-labels.ts'
import * as llmColumnsAndCost from './2026-11-24T1000-llm-columns-and-cost.ts'
import * as traceSummaries from './2026-11-24T1100-trace-summaries.ts'
import * as agentSpanTotals from './2026-11-25T0400-agent-span-totals.ts'
import * as usageRollups from './2026-11-25T0500-usage-rollups.ts'
import * as sessionSummaries from './2026-11-25T0510-session-summaries.ts'
import * as traceTextFilters from './2026-11-25T1800-trace-text-filters.ts'
import * as summaryDeltas from './2026-11-26T0900-summary-deltas.ts'
import * as consoleSessionRevocations from './2026-11-26T1200-console-session-revocations.ts'
import * as scores from './2026-11-26T1400-scores.ts'
import * as llmJudge from './2026-11-26T1410-llm-judge.ts'
import * as projectIngestLimits from './2026-11-26T2300-project-ingest-limits.ts'
import * as unknownTokenCounts from './2026-11-26T2310-unknown-token-counts.ts'
import * as estimatedTokens from './2026-11-26T2311-estimated-tokens.ts'
import * as spansByDay from './2026-11-26T2330-spans-by-day.ts'
import * as datasetsExperiments from './2026-11-26T2340-datasets-experiments.ts'
import * as summariesByDay from './2026-11-27T0100-summaries-by-day.ts'
import * as textBlocks from './2026-11-27T0600-text-blocks.ts'
import * as retentionRuns from './2026-12-06T0150-retention-runs.ts'
import * as judgeInputs from './2026-12-06T0160-judge-inputs.ts'
import * as projectMaskingRules from './2026-12-06T0170-project-masking-rules.ts'
import * as erasures from './2026-12-06T0180-erasures.ts'
import * as monitors from './2026-12-06T0210-monitors.ts'
import * as notificationChannels from './2026-12-06T0220-notification-channels.ts'
import * as dashboards from './2026-12-06T0230-dashboards.ts'
import * as accounts from './2026-12-06T0600-accounts.ts'
import * as labelMovesByPerson from './2026-12-06T0610-label-moves-by-person.ts'
import * as invitations from './2026-12-06T0620-invitations.ts'
import * as singleSignOn from './2026-12-06T0630-single-sign-on.ts'
import * as auditLog from './2026-12-06T0640-audit-log.ts'
import * as collaboration from './2026-12-06T0650-collaboration.ts'
import * as traceRollups from './2026-12-06T0700-trace-rollups.ts'
import * as activeDays from './2026-12-06T0710-active-days.ts'
import * as memberRollupIndex from './2026-12-06T0720-member-rollup-index.ts'

// Every migration, by name; names sort in the order they apply. Listed statically (not read from
// the file system) so that the same list works from source, from a container image and in tests.
// A migration exporting `transactional = false` runs outside a transaction (migrator.ts).
//
// migrationsThatPauseWriters: those that fill new columns or tables from the spans already stored.
// A writer storing spans meanwhile (of the previous version, which knows nothing of them) would
// leave its spans out of what they fill, so `npm run migrate` pauses the writers' queue around
// them (docs/operations.md#migrations). 2026-11-26T2330-spans-by-day is not one: it mirrors what
// writers store meanwhile with triggers, and is built to run beside them.
export const migrations: Record<string, Migration & { transactional?: boolean }> = {
  '2026-11-22T0300-initial-schema': initialSchema,
  '2026-11-24T0900-prompt-labels': promptLabels,
  '2026-11-24T1000-llm-columns-and-cost': llmColumnsAndCost,
  '2026-11-24T1100-trace-summaries': traceSummaries,
  '2026-11-25T0400-agent-span-totals': agentSpanTotals,
  '2026-11-25T0500-usage-rollups': usageRollups,
  '2026-11-25T0510-session-summaries': sessionSummaries,
  '2026-11-25T1800-trace-text-filters': traceTextFilters,
  '2026-11-26T0900-summary-deltas': summaryDeltas,
  '2026-11-26T1200-console-session-revocations': consoleSessionRevocations,
  '2026-11-26T1400-scores': scores,
  '2026-11-26T1410-llm-judge': llmJudge,
  '2026-11-26T2300-project-ingest-limits': projectIngestLimits,
  '2026-11-26T2310-unknown-token-counts': unknownTokenCounts,
  '2026-11-26T2311-estimated-tokens': estimatedTokens,
  '2026-11-26T2330-spans-by-day': spansByDay,
  '2026-11-26T2340-datasets-experiments': datasetsExperiments,
  '2026-11-27T0100-summaries-by-day': summariesByDay,
  '2026-11-27T0600-text-blocks': textBlocks,
  '2026-12-06T0150-retention-runs': retentionRuns,
  '2026-12-06T0160-judge-inputs': judgeInputs,
  '2026-12-06T0170-project-masking-rules': projectMaskingRules,
  '2026-12-06T0180-erasures': erasures,
  '2026-12-06T0210-monitors': monitors,
  '2026-12-06T0220-notification-channels': notificationChannels,
  '2026-12-06T0230-dashboards': dashboards,
  '2026-12-06T0600-accounts': accounts,
  '2026-12-06T0610-label-moves-by-person': labelMovesByPerson,
  '2026-12-06T0620-invitations': invitations,
  '2026-12-06T0630-single-sign-on': singleSignOn,
  '2026-12-06T0640-audit-log': auditLog,
  '2026-12-06T0650-collaboration': collaboration,
  '2026-12-06T0700-trace-rollups': traceRollups,
  '2026-12-06T0710-active-days': activeDays,
  '2026-12-06T0720-member-rollup-index': memberRollupIndex,
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
])
