import { sql } from 'kysely'

// The point of a rollup row's hour, shared by the metric engine's reads of the rollups.

// date_part, not extract: a double, where extract's numeric arithmetic was a third of a grouped read's time.
// Exact: times in milliseconds are integers far below 2^53.
export const bucketOf = (startMs: number, granularitySeconds: number) =>
  sql`floor((date_part('epoch', hour) * 1000 - ${startMs}) / ${granularitySeconds * 1000})::int`
