import type pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { toStorableText } from '@tracewell/db'
import { textArrayLiteral } from './array-literal.ts'
import type { TraceDelta } from './trace-deltas.ts'

// The summaries of traces the fold writes for the first time, as a text COPY into trace_summaries:
// Postgres reads a COPY line far faster than json_to_recordset a JSON object (which parsed, looked
// up and converted every field: a third of the fold's statement on the rows of one-span traces),
// and inserts its rows in batches. A COPY has no ON CONFLICT, which a new trace does not need:
// the fold holds its lock (no other fold writes), and found no stored row of the trace in any day
// (summary-fold.ts). Format: https://www.postgresql.org/docs/current/sql-copy.html (Text Format).

const COLUMNS = [
  'project_id', 'trace_id', 'name', 'has_root', 'service_name', 'start_time', 'end_time', 'duration_us', 'span_count', 'error_count',
  'models', 'response_models', 'vendors', 'services', 'input_tokens', 'output_tokens', 'total_tokens', 'cost_usd', 'tokens_estimated',
  'session_id', 'user_id', 'text_filter', 'fold_day', 'words_in_blocks', 'prompts', 'tags',
] as const

export const summaryCopyStatement = `copy trace_summaries (${COLUMNS.join(', ')}) from stdin`

const NULL = '\\N'
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' }
const NEEDS_ESCAPE = /[\\\t\n\r]/
const ESCAPED = /[\\\t\n\r]/g

/** A value as COPY's text format reads it: a backslash, tab, newline or carriage return escaped. */
function field(value: string | null | undefined): string {
  if (value === null || value === undefined) return NULL
  const text = toStorableText(value)
  return NEEDS_ESCAPE.test(text) ? text.replace(ESCAPED, (character) => COPY_ESCAPES[character] as string) : text
}

const count = (value: number | null | undefined): string => (value === null || value === undefined ? NULL : String(value))

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
 * The COPY line (with its newline) of a new trace's summary, written into `today`'s partition
 * with the word filter `textFilterHex` (TextFilterWords.toHex); undefined for a trace whose times
 * this cannot turn into the exact duration the statement computes (a year past 2255, or a form
 * other than the fold's), which the fold's statement writes instead.
 */
export function summaryCopyLine(row: TraceDelta, textFilterHex: string | null, today: string): string | undefined {
  const start = epochMicros(row.start_time)
  const end = epochMicros(row.end_time)
  if (start === undefined || end === undefined) return undefined
  return `${[
    field(row.project_id), field(row.trace_id), field(row.name), row.has_root ? 't' : 'f', field(row.service_name),
    row.start_time, row.end_time, String(end - start), String(row.span_count), String(row.error_count),
    field(textArrayLiteral(row.models)), field(textArrayLiteral(row.response_models ?? [])), field(textArrayLiteral(row.vendors)), field(textArrayLiteral(row.services)),
    count(row.input_tokens), count(row.output_tokens), count(row.total_tokens), row.cost_usd ?? NULL, row.tokens_estimated === true ? 't' : 'f',
    field(row.session_id), field(row.user_id), textFilterHex === null ? NULL : `x${textFilterHex}`, today, 't',
    field(textArrayLiteral(row.prompts ?? [])), field(textArrayLiteral(row.tags ?? [])),
  ].join('\t')}\n`
}

/**
 * Sends `lines` (COPY text data) through `statement` on the client, in its transaction; resolves
 * with the rows Postgres applied. One write, then the end: never a second chunk queued behind a
 * failed COPY (see streamSources in span-store.ts).
 */
export function copyLines(client: pg.PoolClient, statement: string, lines: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(statement))
    stream.on('error', reject)
    stream.on('finish', () => resolve(stream.rowCount))
    stream.end(lines)
  })
}
