import type { UnwritableShard } from '@tracewell/queue'
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'

export interface SpanBatchMetrics {
  spansWritten: Counter
  spansDuplicate: Counter
  jobsFailed: Counter<'outcome'>
  batchDuration: Histogram
  orphanPayloadsDeleted: Counter
  unpricedLlmSpans: Counter<'reason'>
}

/** The writer's metrics, created once per registry (the all-in-one may start a worker in an app that already has them). */
export function spanBatchMetrics(registry: Registry): SpanBatchMetrics {
  const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined
  return {
    spansWritten:
      existing<Counter>('tracewell_writer_spans_written_total') ??
      new Counter({ name: 'tracewell_writer_spans_written_total', help: 'Spans inserted into Postgres', registers: [registry] }),
    spansDuplicate:
      existing<Counter>('tracewell_writer_spans_duplicate_total') ??
      new Counter({ name: 'tracewell_writer_spans_duplicate_total', help: 'Spans skipped because they were already stored (redelivered jobs, client retries)', registers: [registry] }),
    jobsFailed:
      existing<Counter<'outcome'>>('tracewell_writer_jobs_failed_total') ??
      new Counter({
        name: 'tracewell_writer_jobs_failed_total',
        help: 'Failed job attempts: outcome="retrying" will be tried again, outcome="failed" went to the failed set',
        labelNames: ['outcome'] as const,
        registers: [registry],
      }),
    orphanPayloadsDeleted:
      existing<Counter>('tracewell_writer_orphan_payloads_deleted_total') ??
      new Counter({
        name: 'tracewell_writer_orphan_payloads_deleted_total',
        help: 'Request bodies deleted from Redis because no job refers to them (an enqueue that failed after writing them)',
        registers: [registry],
      }),
    batchDuration:
      existing<Histogram>('tracewell_writer_batch_duration_seconds') ??
      new Histogram({
        name: 'tracewell_writer_batch_duration_seconds',
        help: 'Time to store one queue job',
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [registry],
      }),
    unpricedLlmSpans:
      existing<Counter<'reason'>>('tracewell_writer_unpriced_llm_spans_total') ??
      new Counter({
        name: 'tracewell_writer_unpriced_llm_spans_total',
        help: 'LLM spans (token counts reported) stored without a cost: reason="unknown_model" no price known for the model (add a project price), "no_model" no model name, "no_input_tokens" an output count without a usable input count',
        labelNames: ['reason'] as const,
        registers: [registry],
      }),
  }
}

/**
 * The shards ingest cannot write to now (their master down or short of QUEUE_REPLICA_ACKS
 * replicas), probed when scraped; once per registry.
 */
export function unwritableShardMetrics(registry: Registry, unwritableShards: () => Promise<UnwritableShard[]>): void {
  if (registry.getSingleMetric('tracewell_writer_queue_shards_unwritable')) return
  let last: Promise<UnwritableShard[]> | undefined
  // Both gauges are collected in one scrape: they share one probe.
  const read = () => (last ??= unwritableShards().finally(() => setImmediate(() => (last = undefined))))
  new Gauge({
    name: 'tracewell_writer_queue_shards_unwritable',
    help: 'Shards of the queue ingest cannot write to now (their master down or short of QUEUE_REPLICA_ACKS replicas)',
    registers: [registry],
    async collect() {
      this.set((await read()).length)
    },
  })
  new Gauge({
    name: 'tracewell_writer_queue_shard_unwritable',
    help: 'Set to 1 for each shard of the queue ingest cannot write to now, by shard index',
    labelNames: ['shard'] as const,
    registers: [registry],
    async collect() {
      const unwritable = await read()
      this.reset()
      for (const shard of unwritable) this.set({ shard: String(shard.shard) }, 1)
    },
  })
}
