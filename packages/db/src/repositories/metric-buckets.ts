import { sql, type RawBuilder } from 'kysely'

// The point of a rollup row's hour or of a row's time, shared by the metric engine's reads.

// date_part, not extract: a double, where extract's numeric arithmetic was a third of a grouped read's time.
// Exact: times in milliseconds are integers far below 2^53.
export const bucketOf = (startMs: number, granularitySeconds: number) =>
  sql`floor((date_part('epoch', hour) * 1000 - ${startMs}) / ${granularitySeconds * 1000})::int`

/** A row's point: `time`'s bucket, integer arithmetic on microseconds (date_bin) where extract's numeric was a third of the read. */
export type BucketOf = (time: RawBuilder<unknown>) => RawBuilder<unknown>

/**
 * A row's bucket in the window. The bucket's start is a whole number of microseconds: its epoch in
 * ms, a double, rounds to the integer it is, and the bucket is the one floor((epoch ms − start) /
 * width) gives exactly.
 */
export const timeBucketOf = (startMs: number, granularitySeconds: number): BucketOf => (time) => sql`round((date_part('epoch', date_bin(${granularitySeconds}::float8 * interval '1 second', ${time}, ${new Date(startMs)}::timestamptz)) * 1000
    - ${startMs}) / ${granularitySeconds * 1000})::int`

export const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000

/**
 * Whether the rollups' hours answer a window: it starts on an hour, its points (null: one figure
 * from `from` to `to`, whatever its length) are whole hours, and it ends on an hour or now (its
 * hour holds nothing later yet: a budget's month to date is read this way).
 */
export function onWholeHours(startMs: number, granularitySeconds: number | null, to: Date): boolean {
  const wholeHours = startMs % HOUR_MS === 0 && (granularitySeconds === null || (granularitySeconds * 1000) % HOUR_MS === 0)
  return wholeHours && (to.getTime() % HOUR_MS === 0 || to.getTime() >= Date.now() - 1000)
}

/** Whether points of this width are whole hours that tile the UTC day (1, 2, 3, 4, 6, 8, 12 or 24 hours). */
export function tilesTheUtcDay(granularitySeconds: number): boolean {
  const width = granularitySeconds * 1000
  return width % HOUR_MS === 0 && DAY_MS % width === 0
}
