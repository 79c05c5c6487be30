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

  /** Ends a source's spans: its traces' deltas are closed (TraceDeltas). */
  endSource(): void {
    this.traces.closeOpen()
  }

  get isEmpty(): boolean {
    return this.traces.size === 0
  }

  /**
   * The row's values, in summaryDeltaInsert's order; the traces as UTF-8 bytes, which node-postgres
   * sends as a binary parameter (a text's binary form is its bytes), with no string made of them.
   */
  values(): [traceCount: number, traces: Buffer, usage: string] {
    // Text as the spans' own columns store it: Postgres refuses U+0000 and lone surrogates.
    return [this.traces.size, this.traces.text(), toStorableJson(JSON.stringify(this.usage.combinations()))]
  }
}

/** The insert of a SummaryDelta's values, for a pg client. */
export const summaryDeltaInsert = 'insert into summary_deltas (trace_count, traces, usage) values ($1, $2, $3)'

/** Writes the delta's row, unless it is empty (a batch that inserted nothing); in the caller's transaction. */
export async function insertSummaryDelta(db: Executor, delta: SummaryDelta): Promise<void> {
  if (delta.isEmpty) return
  const [traceCount, traces, usage] = delta.values()
  // As a string here: PGlite (this path's usual database) would send bytes as bytea.
  await sql`insert into summary_deltas (trace_count, traces, usage) values (${traceCount}, ${traces.toString('utf8')}, ${usage})`.execute(db)
}
