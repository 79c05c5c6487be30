/** A rollup row's latency histogram as the tests read it: its lowest bucket and the counts from there. */
export interface HistogramRow {
  lo: number
  counts: number[]
}

/** Adds `row`'s histogram into the sums kept by `key` (bucket → count), as the metric engine sums rows. */
export function addHistogram(histograms: Map<string, Map<number, number>>, key: string, row: HistogramRow): void {
  const histogram = histograms.get(key) ?? new Map<number, number>()
  row.counts.forEach((n, o) => histogram.set(row.lo + o, (histogram.get(row.lo + o) ?? 0) + n))
  histograms.set(key, histogram)
}
