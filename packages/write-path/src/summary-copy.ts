import type pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { CopyChunks, NotEncodable } from './copy-chunks.ts'
import type { TraceDelta } from './trace-deltas.ts'

// The summaries of traces the fold writes for the first time, as a binary COPY into
// trace_summaries (copy-chunks.ts): Postgres reads a COPY row far faster than json_to_recordset a
// JSON object (which parsed, looked up and converted every field: a third of the fold's statement
// on the rows of one-span traces), and inserts its rows in batches. Binary rather than text, as
// the spans' COPY: Postgres parsed the text format's times, arrays, numbers and filters in about a
// fifth of its time a new trace (docs/benchmarks.md, "The summaries' COPY in binary"). A COPY has
// no ON CONFLICT, which a new trace does not need: the fold holds its lock (no other fold writes),
// and found no stored row of the trace in any day (summary-fold.ts).

const COLUMNS = [
  'project_id', 'trace_id', 'name', 'has_root', 'service_name', 'start_time', 'end_time', 'duration_us', 'span_count', 'error_count',
  'models', 'response_models', 'vendors', 'services', 'input_tokens', 'output_tokens', 'total_tokens', 'cost_usd', 'tokens_estimated',
  'session_id', 'user_id', 'text_filter', 'fold_day', 'words_in_blocks', 'prompts', 'tags',
] as const

export const summaryCopyStatement = `copy trace_summaries (${COLUMNS.join(', ')}) from stdin with (format binary)`

/** A time as the fold carries it (ISO 8601 with microseconds, UTC, four-digit year). */
const ISO_MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/

/** The minute last parsed (its first 16 characters) and its milliseconds since the epoch. */
let lastMinute = ''
let lastMinuteMs = Number.NaN

/** Microseconds since the Unix epoch of such a time; undefined for any other form, or past 2^53. */
export function epochMicros(iso: string): number | undefined {
  if (!ISO_MICROS.test(iso)) return undefined
  const seconds = Number(iso.slice(17, 19))
  // A fold's traces start and end within a few minutes: Date.parse once a minute, not four times a
  // trace (a tenth of the fold's own CPU on one-span traces). Seconds past 59 and the hour 24 (valid
  // only as 24:00:00) are Date.parse's to judge.
  if (seconds > 59 || iso.startsWith('24', 11)) return wholeEpochMicros(iso)
  const minute = iso.slice(0, 16)
  if (minute !== lastMinute) {
    lastMinuteMs = Date.parse(`${minute}:00Z`)
    lastMinute = minute
  }
  const micros = (lastMinuteMs + seconds * 1000) * 1000 + Number(iso.slice(20, 26))
  return Number.isSafeInteger(micros) ? micros : undefined
}

function wholeEpochMicros(iso: string): number | undefined {
  const micros = Date.parse(`${iso.slice(0, 19)}Z`) * 1000 + Number(iso.slice(20, 26))
  return Number.isSafeInteger(micros) ? micros : undefined
}

/**
 * The COPY data of new traces' summaries, in COLUMNS order, written into one day's partition (the
 * fold's today, `YYYY-MM-DD`).
 */
export class SummaryCopyEncoder {
  readonly #copy = new CopyChunks(COLUMNS.length)
  readonly #day: string
  #rows = 0

  constructor(day: string) {
    this.#day = day
  }

  get rows(): number {
    return this.#rows
  }

  /**
   * Adds the summary of a new trace with the word filter `textFilter` (TextFilterWords.toBytes);
   * false, adding nothing, for a trace whose times this cannot turn into the exact duration the
   * fold's statement computes (a year past 2255, or a form other than the fold's) or whose cost is
   * not plain decimal text, which the statement writes instead.
   */
  add(row: TraceDelta, textFilter: Uint8Array | null): boolean {
    const start = epochMicros(row.start_time)
    const end = epochMicros(row.end_time)
    if (start === undefined || end === undefined) return false
    const copy = this.#copy
    const mark = copy.mark()
    try {
      copy.row()
      copy.text(row.project_id)
      copy.text(row.trace_id)
      copy.text(row.name)
      copy.bool(row.has_root)
      copy.text(row.service_name)
      copy.timestampMicros(start)
      copy.timestampMicros(end)
      copy.int64(end - start)
      copy.int32(row.span_count)
      copy.int32(row.error_count)
      copy.textArray(row.models)
      copy.textArray(row.response_models ?? [])
      copy.textArray(row.vendors)
      copy.textArray(row.services)
      copy.int64(row.input_tokens)
      copy.int64(row.output_tokens)
      copy.int64(row.total_tokens)
      copy.numericText(row.cost_usd)
      copy.bool(row.tokens_estimated === true)
      copy.text(row.session_id)
      copy.text(row.user_id)
      copy.varbit(textFilter)
      copy.date(this.#day)
      copy.bool(true)
      copy.textArray(row.prompts ?? [])
      copy.textArray(row.tags ?? [])
    } catch (error) {
      if (!(error instanceof NotEncodable)) throw error
      copy.rewind(mark)
      return false
    }
    this.#rows++
    return true
  }

  /** The whole COPY data, trailer included; nothing may be added after it. */
  finish(): Buffer {
    this.#copy.finish()
    const { chunks } = this.#copy
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)
  }
}

/**
 * Sends `data` (COPY data) through `statement` on the client, in its transaction; resolves with
 * the rows Postgres applied. One write, then the end: never a second chunk queued behind a failed
 * COPY (see streamSources in span-store.ts).
 */
export function copyData(client: pg.PoolClient, statement: string, data: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(statement))
    stream.on('error', reject)
    stream.on('finish', () => resolve(stream.rowCount))
    stream.end(data)
  })
}
