import { sql, toStorableJson, type Executor, type SpanFields } from '@tracewell/db'
import { TraceDeltas } from './trace-deltas.ts'
import { UsageDeltas } from './usage-deltas.ts'

/**
 * What one stored batch adds to the summaries: its traces' deltas and its usage combinations,
 * written as one row of summary_deltas in the transaction that stores the spans, so that the row
 * exists exactly when the spans do. Only spans that were inserted may be added.
 */
export class SummaryDelta {
  readonly traces = new TraceDeltas()
  readonly usage = new UsageDeltas()

  add(projectId: string, span: SpanFields): void {
    this.traces.add(projectId, span)
    this.usage.add(projectId, span)
  }

  /** Adds the words of the last span's attributes, given as the UTF-8 bytes of their JSON text. */
  addWordsOfLastSpan(bytes: Uint8Array, start: number, end: number): void {
    this.traces.addWordsOfLastSpan(bytes, start, end)
  }

  get isEmpty(): boolean {
    return this.traces.size === 0
  }

  /** The row's values, in summaryDeltaInsert's order. */
  values(): [traceCount: number, traces: string, usage: string] {
    // Text as the spans' own columns store it: Postgres refuses U+0000 and lone surrogates.
    return [this.traces.size, toStorableJson(JSON.stringify(this.traces.deltas())), toStorableJson(JSON.stringify(this.usage.combinations()))]
  }
}

/** The insert of a SummaryDelta's values, for a pg client. */
export const summaryDeltaInsert = 'insert into summary_deltas (trace_count, traces, usage) values ($1, $2, $3)'

/** Writes the delta's row, unless it is empty (a batch that inserted nothing); in the caller's transaction. */
export async function insertSummaryDelta(db: Executor, delta: SummaryDelta): Promise<void> {
  if (delta.isEmpty) return
  const [traceCount, traces, usage] = delta.values()
  await sql`insert into summary_deltas (trace_count, traces, usage) values (${traceCount}, ${traces}, ${usage})`.execute(db)
}
