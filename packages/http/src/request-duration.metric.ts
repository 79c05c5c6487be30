import type { Metric, Registry } from 'prom-client'

interface SeriesLabels {
  method: string
  route: string
  status: string
}

/** The observations of one (method, route, status), as plain numbers. */
interface Series {
  readonly labels: SeriesLabels
  /** Observations per bucket (not cumulative); the last counts those above every bound. */
  readonly counts: number[]
  sum: number
}

/**
 * `tracewell_http_request_duration_seconds`: a Prometheus histogram of request durations by method, route
 * and status, registered in the app's prom-client registry, which renders it like its own.
 *
 * It is not a prom-client `Histogram` because that one validates and hashes the label set on
 * every observation, even through a `labels()` child: a visible share of a cached GET
 * /api/promptset (docs/benchmarks.md#figures-behind-code-comments-2026-12-06). Here an observation is a map lookup
 * and a few additions; the label work happens once per series and at scrape time.
 */
export class RequestDurationHistogram {
  readonly name = 'tracewell_http_request_duration_seconds'
  readonly help = 'HTTP request duration by method, route and status'
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly #upperBounds: readonly number[]
  // route → method → status → series: lookups by the route and method strings Fastify already
  // holds and the numeric status, so observing allocates nothing (a joined string key cost more
  // than the rest of an observation).
  readonly #series = new Map<string, Map<string, Map<number, Series>>>()

  constructor(options: { upperBounds: readonly number[]; registry: Registry }) {
    this.#upperBounds = [...options.upperBounds].sort((a, b) => a - b)
    // The registry only calls get(), reset() and reads the fields above; prom-client's typings
    // name its own classes, hence the cast.
    options.registry.registerMetric(this as unknown as Metric)
  }

  /** Series are kept per (method, route pattern, status): bounded by the routes and statuses that exist. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const series = this.#series.get(route)?.get(method)?.get(status) ?? this.#newSeries(method, route, status)
    const bounds = this.#upperBounds
    let bucket = 0
    while (bucket < bounds.length && seconds > (bounds[bucket] as number)) bucket++
    series.counts[bucket] = (series.counts[bucket] as number) + 1
    series.sum += seconds
  }

  #newSeries(method: string, route: string, status: number): Series {
    const series = { labels: { method, route, status: String(status) }, counts: new Array<number>(this.#upperBounds.length + 1).fill(0), sum: 0 }
    let byMethod = this.#series.get(route)
    if (byMethod === undefined) this.#series.set(route, (byMethod = new Map()))
    let byStatus = byMethod.get(method)
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()))
    byStatus.set(status, series)
    return series
  }

  /** The histogram in prom-client's shape: cumulative `_bucket`s with `le`, then `_sum` and `_count`. */
  async get() {
    const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = []
    for (const { labels, counts, sum } of this.#allSeries()) {
      let cumulative = 0
      this.#upperBounds.forEach((le, index) => {
        cumulative += counts[index] as number
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: cumulative })
      })
      cumulative += counts[this.#upperBounds.length] as number
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cumulative })
      values.push({ metricName: `${this.name}_sum`, labels: { ...labels }, value: sum })
      values.push({ metricName: `${this.name}_count`, labels: { ...labels }, value: cumulative })
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }

  *#allSeries(): Iterable<Series> {
    for (const byMethod of this.#series.values()) for (const byStatus of byMethod.values()) yield* byStatus.values()
  }

  reset(): void {
    this.#series.clear()
  }
}
