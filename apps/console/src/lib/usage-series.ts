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

/**
 * The series of one metric as chart rows, one per bucket in time order. The groups with the
 * largest totals keep their own series; the rest are summed as "other", so a chart stays readable
 * with hundreds of users.
 */
export function chartRows(series: readonly UsagePoint[], metric: UsageMetric, grouped: boolean): ChartRows {
  const nameOf = (point: UsagePoint) => point.group ?? (grouped ? unknownGroup : noGroup)
  const totals = new Map<string, number>()
  for (const point of series) {
    const group = nameOf(point)
    totals.set(group, (totals.get(group) ?? 0) + (point[metric] ?? 0))
  }
  const ranked = [...totals.entries()].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).map(([group]) => group)
  const kept = new Set(ranked.length > maxGroups ? ranked.slice(0, maxGroups - 1) : ranked)
  const groups = ranked.length > maxGroups ? [...kept, otherGroup] : ranked

  const byBucket = new Map<string, Record<string, number | string>>()
  for (const point of series) {
    let row = byBucket.get(point.bucket)
    if (!row) {
      row = { bucket: point.bucket }
      for (const group of groups) row[group] = 0
      byBucket.set(point.bucket, row)
    }
    const group = nameOf(point)
    const key = kept.has(group) ? group : otherGroup
    row[key] = (row[key] as number) + (point[metric] ?? 0)
  }
  const rows = [...byBucket.values()].sort((a, b) => Date.parse(a.bucket as string) - Date.parse(b.bucket as string))
  return { rows, groups }
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

/** The score averages as chart rows: one per bucket in time order, a value per score name (absent where it had none). */
export function scoreRows(series: ReadonlyArray<ScoreAverage & { bucket: string }>): { rows: Array<Record<string, number | string>>; names: string[] } {
  const names = [...new Set(series.map((point) => point.name))].sort()
  const byBucket = new Map<string, Record<string, number | string>>()
  for (const point of series) {
    let row = byBucket.get(point.bucket)
    if (!row) byBucket.set(point.bucket, (row = { bucket: point.bucket }))
    row[point.name] = point.average
  }
  return { rows: [...byBucket.values()].sort((a, b) => Date.parse(a.bucket as string) - Date.parse(b.bucket as string)), names }
}
