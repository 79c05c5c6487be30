import { Counter, Gauge, type Registry } from 'prom-client'
import { summaryBacklog, type Db } from '@tracewell/db'

// Apart from summariser.ts: a summariser in a thread of its own reports through messages and
// loads no metrics library.

export interface SummariserMetrics {
  deltas: Counter
  traces: Counter
}

/** The summariser's metrics, once per registry; the lag gauge reads the backlog when scraped. */
export function summariserMetrics(registry: Registry, db: Db): SummariserMetrics {
  const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined
  if (existing<Gauge>('tracewell_writer_aggregation_lag_seconds') === undefined) {
    new Gauge({
      name: 'tracewell_writer_aggregation_lag_seconds',
      help: 'Age of the oldest stored batch whose spans are not yet in the trace, session and usage summaries',
      registers: [registry],
      async collect() {
        try {
          this.set((await summaryBacklog(db)).lagSeconds)
        } catch {
          // Postgres unreachable: the scrape keeps the last value (the writer's other metrics say why).
        }
      },
    })
  }
  return {
    deltas:
      existing<Counter>('tracewell_writer_aggregation_batches_folded_total') ??
      new Counter({ name: 'tracewell_writer_aggregation_batches_folded_total', help: 'Stored batches folded into the summaries', registers: [registry] }),
    traces:
      existing<Counter>('tracewell_writer_aggregation_traces_folded_total') ??
      new Counter({ name: 'tracewell_writer_aggregation_traces_folded_total', help: 'Trace summaries written by the summariser (a trace once per fold)', registers: [registry] }),
  }
}
