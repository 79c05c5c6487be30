import type { ScoreAverage, UsagePoint } from '../api/types.ts'

export type UsageMetric = 'costUsd' | 'inputTokens' | 'outputTokens' | 'traces' | 'errors' | 'spans'

/** One chart's rows: a bucket and one value per group (the key '' when ungrouped). */
export interface ChartRows {
  rows: Array<Record<string, number | string>>
  groups: string[]
}

const maxGroups = 7
export const otherGroup = 'other'
/** The series' name when the usage is not split. */
export const noGroup = 'all'
/** The name of the share with no value to split by (spans without a model, say). */
export const unknownGroup = '(none)'

const hourMs = 3_600_000

/**
 * The start of every bucket the API answers for [from, to), as ISO strings: the hours or days of
 * this browser's time zone (the `tz` the console sends). The API answers only the buckets that
 * hold something, so a quiet week would otherwise chart as two bars. Like the API, `from` is first
 * taken back to the start of its UTC hour (docs/api.md, usage).
 */
export function bucketStarts(from: Date, to: Date, bucket: 'hour' | 'day'): string[] {
  let at = new Date(Math.floor(from.getTime() / hourMs) * hourMs)
  if (bucket === 'day') at.setHours(0, 0, 0, 0)
  else at.setMinutes(0, 0, 0)
  const starts: string[] = []
  // Bounded like the API's answer (3,660 days), whatever the window asked for.
  while (at.getTime() < to.getTime() && starts.length < 3660) {
    starts.push(at.toISOString())
    // Days by the calendar, so a day of 23 or 25 hours (a daylight-saving change) is one bucket.
    at = bucket === 'day' ? new Date(at.getFullYear(), at.getMonth(), at.getDate() + 1) : new Date(at.getTime() + hourMs)
  }
  return starts
}

/** One row per bucket, the given ones first (empty), in time order, `fill` making a new one. */
function rowsByBucket(buckets: readonly string[], fill: (bucket: string) => Record<string, number | string>) {
  const byTime = new Map<number, Record<string, number | string>>()
  for (const bucket of buckets) byTime.set(Date.parse(bucket), fill(bucket))
  return {
    row(bucket: string): Record<string, number | string> {
      const time = Date.parse(bucket)
      let row = byTime.get(time)
      if (!row) byTime.set(time, (row = fill(bucket)))
      return row
    },
    sorted: () => [...byTime.entries()].sort(([a], [b]) => a - b).map(([, row]) => row),
  }
}

/**
 * The series of one metric as chart rows, one per bucket in time order: every bucket of `buckets`
 * (bucketStarts), with nothing where the API answered nothing, and any other bucket the API
 * answered. The groups with the largest totals keep their own series; the rest are summed as
 * "other", so a chart stays readable with hundreds of users.
 */
export function chartRows(series: readonly UsagePoint[], metric: UsageMetric, grouped: boolean, buckets: readonly string[] = []): ChartRows {
  const nameOf = (point: UsagePoint) => point.group ?? (grouped ? unknownGroup : noGroup)
  const totals = new Map<string, number>()
  for (const point of series) {
    const group = nameOf(point)
    totals.set(group, (totals.get(group) ?? 0) + (point[metric] ?? 0))
  }
  const ranked = [...totals.entries()].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).map(([group]) => group)
  const kept = new Set(ranked.length > maxGroups ? ranked.slice(0, maxGroups - 1) : ranked)
  const groups = ranked.length > maxGroups ? [...kept, otherGroup] : ranked

  const rows = rowsByBucket(buckets, (bucket) => {
    const row: Record<string, number | string> = { bucket }
    for (const group of groups) row[group] = 0
    return row
  })
  for (const point of series) {
    const row = rows.row(point.bucket)
    const group = nameOf(point)
    const key = kept.has(group) ? group : otherGroup
    row[key] = (row[key] as number) + (point[metric] ?? 0)
  }
  return { rows: rows.sorted(), groups }
}

/** Colours for up to eight series, distinguishable in both themes and by most colour-blind readers (Okabe–Ito). */
export const seriesColours = ['#56b4e9', '#e69f00', '#009e73', '#f0e442', '#cc79a7', '#0072b2', '#d55e00', '#999999']

/**
 * One colour per group for every chart of the page, so a model has the same colour in the cost
 * chart as in the token chart: the groups ranked by their traces, "other" grey.
 */
export function groupColours(series: readonly UsagePoint[], grouped: boolean): (group: string) => string {
  const { groups } = chartRows(series, 'traces', grouped)
  const ranked = groups.filter((group) => group !== otherGroup)
  const grey = seriesColours[seriesColours.length - 1] as string
  return (group) => {
    const rank = ranked.indexOf(group)
    return rank < 0 || rank >= seriesColours.length - 1 ? grey : (seriesColours[rank] as string)
  }
}

/**
 * The score averages as chart rows: one per bucket in time order (every one of `buckets`), a value
 * per score name (absent where it had none: a gap in its line, not a zero).
 */
export function scoreRows(series: ReadonlyArray<ScoreAverage & { bucket: string }>, buckets: readonly string[] = []): { rows: Array<Record<string, number | string>>; names: string[] } {
  const names = [...new Set(series.map((point) => point.name))].sort()
  const rows = rowsByBucket(buckets, (bucket) => ({ bucket }))
  for (const point of series) rows.row(point.bucket)[point.name] = point.average
  return { rows: rows.sorted(), names }
}
