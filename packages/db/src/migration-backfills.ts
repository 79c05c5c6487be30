import type { AnyDb } from './migrations/any-db.ts'

// The backfills of migrations that benchmarks and tests call by name, each
// importing its migration when called: imported with this package, they loaded the migrations they
// live in into every service (migrations/index.ts says why that matters).

export async function backfillTraceSummaries(db: AnyDb, options: { wordsInBlocks?: boolean } = {}): Promise<void> {
  await (await import('./migrations/2026-11-24T1100-trace-summaries.ts')).backfillTraceSummaries(db, options)
}

export async function backfillUsageRollups(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-11-25T0500-usage-rollups.ts')).backfillUsageRollups(db)
}

export async function backfillSessionSummaries(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-11-25T0510-session-summaries.ts')).backfillSessionSummaries(db)
}

export async function recountRollupTraces(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-11-26T0900-summary-deltas.ts')).recountRollupTraces(db)
}

export async function backfillTraceRollups(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-12-06T0700-trace-rollups.ts')).backfillTraceRollups(db)
}

export async function backfillActiveDays(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-12-06T0710-active-days.ts')).backfillActiveDays(db)
}

export async function backfillUserDayFigures(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-12-06T0820-user-day-figures.ts')).backfillUserDayFigures(db)
}

export async function backfillSessionFigures(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-12-06T1500-session-figures.ts')).backfillSessionFigures(db)
}

export async function backfillUserWeekFigures(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-12-06T1610-user-week-figures.ts')).backfillUserWeekFigures(db)
}

export async function backfillTraceShapes(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-12-06T1620-trace-shapes.ts')).backfillTraceShapes(db)
}

export async function backfillUserDayHours(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-12-06T1621-user-day-hours.ts')).backfillUserDayHours(db)
}

export async function backfillScoreDimensions(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-12-06T2200-score-trace-dimensions.ts')).backfillScoreDimensions(db)
}

export async function backfillJudgmentDimensions(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-12-07T0110-judgment-trace-dimensions.ts')).backfillJudgmentDimensions(db)
}

export async function nullUnknownTokenCounts(db: AnyDb): Promise<void> {
  await (await import('./migrations/2026-11-26T2310-unknown-token-counts.ts')).nullUnknownTokenCounts(db)
}
