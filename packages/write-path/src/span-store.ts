import type pg from 'pg'
import { from as copyFrom, type CopyStreamQuery } from 'pg-copy-streams'
import { poolOf, toStorableJson, withPoolClient, type Db, type Executor, type SpanFields, type SpanInsert } from '@tracewell/db'
import { JsonTextBytes } from '@tracewell/json-text'
import { releaseCopyChunks } from './copy-chunks.ts'
import { spanCopyStatement, SpanCopyEncoder } from './span-copy.encoder.ts'
import type { CopyLane, SharedCopy } from './shared-copy.ts'
import { insertSpanRows, spanRowsJson, spanKey, type ProjectSpanSource } from './span-statement.ts'
import { insertSummaryDelta, SummaryDelta, summaryDeltaInsert } from './summary-delta.ts'

// Storing a batch of spans: the first step of the write path. One transaction writes the spans and
// one row of summary_deltas (what the batch adds to the summaries), both append-only: no row that
// another transaction updates, so writers never wait on each other's locks. The summaries
// themselves are folded in later by the summariser (summary-fold.ts).

export interface StoreResult {
  inserted: number
  duplicates: number
}

export interface StoreOptions {
  /**
   * A COPY shared with the batches ready beside this one (the writer's jobs): small jobs are stored
   * at the cost of large ones (copy-combiner.ts). Without it the batch has a COPY of its own.
   */
  combiner?: SharedCopy
  /** How the batch waits for its shared COPY (CopyLane). */
  lane?: CopyLane
  /** Who holds the batch (the writer's worker of one queue shard): what a shared COPY's linger counts jobs by. */
  holder?: string
  /**
   * Spans the batch holds, when the caller knows them without asking the sources (a queue job
   * says how many): what a shared COPY is bounded by. Counted from the sources otherwise.
   */
  spanCount?: number
}

/**
 * Stores spans, idempotently: the one way spans are stored, saying how many were new and how many
 * were stored already. Either spans at hand (each naming its project) or sources that produce a
 * project's spans when asked (a queue job's request bodies, decoded and let go one at a time).
 *
 * On Postgres through a binary COPY (copySpans): the rows arrive in their stored form instead of
 * as one JSON document that jsonb_to_recordset unpacks, which the database does in a good deal
 * less time. COPY has no ON CONFLICT, so it is optimistic: if a span of the batch is already
 * stored (a request a client sent twice, or the same span twice in the batch) the unique violation
 * rolls it back and the batch is stored by statements instead (insertSpans), which skip those
 * spans. Such a batch costs the failed COPY on top. A shared COPY that failed otherwise is tried
 * again as the batch's own, so that the failure lands on the batch that caused it. Any other
 * error rolls back and is thrown unchanged, its SQLSTATE intact for the caller's retry decision.
 * On PGlite (embedded, no connection to save work on) it is the statements.
 *
 * The sources' spans are asked for once for the COPY, and once more only for a fallback.
 */
export async function storeSpans(db: Db, spans: readonly SpanInsert[] | readonly ProjectSpanSource[], options: StoreOptions = {}): Promise<StoreResult> {
  if (spans.length === 0) return { inserted: 0, duplicates: 0 }
  const sources = isSourceList(spans) ? spans : projectRuns(spans)
  const copied = await copyAsTold(db, sources, options)
  if (copied !== undefined) return { inserted: copied, duplicates: 0 }
  return insertSpans(db, sources)
}

/** The rows a COPY inserted, shared or the batch's own, or undefined when the batch must go by statement. */
async function copyAsTold(db: Db, sources: readonly ProjectSpanSource[], { combiner, lane, holder, spanCount }: StoreOptions): Promise<number | undefined> {
  if (combiner === undefined) return copySpans(db, sources)
  const outcome = await combiner.copy(sources, spanCount ?? countSpansOf(sources), lane, holder)
  if (typeof outcome === 'object') return outcome.inserted
  return outcome === 'alone' ? copySpans(db, sources) : undefined
}

const isSourceList = (spans: readonly SpanInsert[] | readonly ProjectSpanSource[]): spans is readonly ProjectSpanSource[] =>
  typeof (spans[0] as Partial<ProjectSpanSource>).spans === 'function'

/** Spans in all, asked of sources that hold them at hand (a caller with a queue job says it instead). */
const countSpansOf = (sources: readonly ProjectSpanSource[]): number => sources.reduce((sum, source) => sum + source.spans().length, 0)

/** Consecutive spans of one project, as one source each. */
function projectRuns(spans: readonly SpanInsert[]): ProjectSpanSource[] {
  const runs: ProjectSpanSource[] = []
  let start = 0
  for (let i = 1; i <= spans.length; i++) {
    const projectId = (spans[start] as SpanInsert).projectId
    if (i < spans.length && (spans[i] as SpanInsert).projectId === projectId) continue
    const run = spans.slice(start, i)
    runs.push({ projectId, spans: () => run })
    start = i
  }
  return runs
}

/**
 * storeSpans' COPY step: the rows the COPY inserted, or undefined when the batch must go by
 * statement instead (a span already stored, a value only the statement path stores exactly, or
 * PGlite), with nothing stored. The sources' spans are asked for at most once.
 */
export async function copySpans(db: Db, sources: readonly ProjectSpanSource[], endBefore?: EndBefore): Promise<number | undefined> {
  const pool = poolOf.get(db)
  if (pool === undefined) return undefined
  if (sources.length === 0) return 0
  // Every span of a COPY is new (else it rolls back), so all of them go into the delta.
  const delta = new SummaryDelta()
  const encoder = new SpanCopyEncoder({
    span: (projectId, span) => delta.add(projectId, span),
    // The words of full-text search (attributes, events), read from the bytes the COPY sends.
    searchableText: (bytes, start, end) => delta.addWordsOfLastSpan(bytes, start, end),
    sourceEnd: () => delta.endSource(),
  })
  return copyInTransaction(pool, encoder, sources, delta, endBefore)
}

/**
 * Asked before each source but the first is encoded: true ends the COPY there, with the sources
 * before it (a COPY shared by several jobs ends between two jobs once it has been open long
 * enough, CopyCombiner). Once it has answered true it is not asked again.
 */
export type EndBefore = (sourceIndex: number) => boolean

/**
 * storeSpans' statement step: idempotent statements, one per SPANS_PER_STATEMENT spans (a larger
 * source alone), and the delta of the spans they inserted, in a transaction of their own.
 */
export function insertSpans(db: Db, sources: readonly ProjectSpanSource[]): Promise<StoreResult> {
  return db.transaction().execute((trx) => insertInTransaction(trx, sources))
}

async function insertInTransaction(db: Executor, sources: readonly ProjectSpanSource[]): Promise<StoreResult> {
  const delta = new SummaryDelta()
  let inserted = 0
  let spans = 0
  let statement: Array<{ projectId: string; spans: readonly SpanFields[] }> = []
  let statementSpans = 0
  const flush = async () => {
    const stored = await insertSpanRows(db, statement.map((run) => spanRowsJson(run.projectId, run.spans)))
    inserted += stored.size
    for (const run of statement) {
      for (const span of run.spans) {
        if (!stored.has(spanKey(run.projectId, span.traceId, span.spanId))) continue
        delta.add(run.projectId, span)
        for (const text of [span.attributes, span.events]) if (text !== undefined) delta.addWordsOfLastSpan(...searchableBytes(text))
      }
      delta.endSource()
    }
    statement = []
    statementSpans = 0
  }
  for (const source of sources) {
    const projectSpans = source.spans()
    if (statement.length > 0 && statementSpans + projectSpans.length > SPANS_PER_STATEMENT) await flush()
    statement.push({ projectId: source.projectId, spans: projectSpans })
    statementSpans += projectSpans.length
    spans += projectSpans.length
  }
  if (statement.length > 0) await flush()
  await insertSummaryDelta(db, delta)
  return { inserted, duplicates: spans - inserted }
}

/** A span's attributes or events as the COPY path reads their words: the UTF-8 bytes of their storable JSON text. */
function searchableBytes(value: unknown): [Uint8Array, number, number] {
  const text = value instanceof JsonTextBytes ? value.text() : JSON.stringify(value)
  const bytes = Buffer.from(toStorableJson(text))
  return [bytes, 0, bytes.length]
}

// The statement path sends its rows as one text parameter: this bounds that parameter, and so
// the work of one statement.
const SPANS_PER_STATEMENT = 5_000

const UNIQUE_VIOLATION = '23505'

/**
 * Runs the COPY of the sources in a transaction of its own (streamSources); undefined when it was
 * rolled back by a unique violation or because a source held a value the encoder leaves to the
 * statement path.
 */
async function copyInTransaction(
  pool: pg.Pool,
  encoder: SpanCopyEncoder,
  sources: readonly ProjectSpanSource[],
  delta: SummaryDelta,
  endBefore: EndBefore | undefined,
): Promise<number | undefined> {
  return withPoolClient(pool, async (client, broke) => {
    try {
      await client.query('begin')
      const rows = await streamSources(client.query(copyFrom(spanCopyStatement)), encoder, sources, endBefore)
      if (rows === undefined) {
        await client.query('rollback')
        return undefined
      }
      // Not a named (prepared) statement: PgBouncer in transaction pooling mode (before 1.21) would
      // send its next use to a server connection that never prepared it.
      if (!delta.isEmpty) await client.query(summaryDeltaInsert, delta.values())
      await client.query('commit')
      releaseCopyChunks(encoder.chunks)
      return rows
    } catch (error) {
      await client.query('rollback').catch(broke)
      if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) return undefined
      throw error
    }
  })
}

/**
 * Encodes the sources into the COPY one at a time, writing each chunk as soon as it is full, and
 * resolves with the COPY's row count once Postgres has applied it. Streamed so that Postgres
 * parses and inserts a job's first rows while the writer encodes the later ones: encoded whole
 * first, a large job kept the writer busy with Postgres idle, and then Postgres busy with the
 * writer idle (docs/benchmarks.md#figures-behind-code-comments-2026-12-06). It yields to the event loop after each chunk,
 * so that the other jobs' round trips are answered while a large one is encoded.
 *
 * Resolves undefined when a source holds a value only the statement path stores exactly: the COPY
 * is then ended where it stands (its data may stop mid-row, which Postgres refuses), and the
 * caller rolls back whatever it made of it.
 *
 * One chunk at a time, the next only after the socket took the previous: when a COPY fails,
 * pg-copy-streams lets go of the connection but goes on flushing what it had queued at the next
 * socket 'drain', and that TypeError crashes the process (seen with a whole batch written at once;
 * brianc/node-pg-copy-streams#153). For the same reason the stream is never destroy()ed (its
 * _destroy sends a CopyFail through that let-go connection), nor ended once it has failed.
 */
async function streamSources(stream: CopyStreamQuery, encoder: SpanCopyEncoder, sources: readonly ProjectSpanSource[], endBefore: EndBefore | undefined): Promise<number | undefined> {
  let failed = false
  const applied = new Promise<number>((resolve, reject) => {
    stream.on('error', (error) => {
      failed = true
      reject(error)
    })
    stream.on('finish', () => resolve(stream.rowCount))
  })
  // A write whose 'drain' never comes (the connection broke) must not hold the job: the error does.
  const write = (chunk: Buffer) => (failed ? applied : Promise.race([new Promise<void>((resolve) => stream.write(chunk, () => resolve())), applied]))
  const writeAll = async (chunks: readonly Buffer[]) => {
    for (const chunk of chunks) await write(chunk)
    if (chunks.length > 0) await new Promise(setImmediate)
  }
  // Ends a COPY left unfinished, whatever Postgres makes of it, so the transaction can roll back.
  const abandon = async () => {
    if (!failed) stream.end()
    await applied.catch(() => {})
  }
  try {
    for (const [index, source] of sources.entries()) {
      if (index > 0 && endBefore?.(index) === true) break
      if (!encoder.add(source)) {
        await abandon()
        return undefined
      }
      await writeAll(encoder.takeFilled())
    }
    await writeAll(encoder.finish())
  } catch (error) {
    // A source that could not give its spans (a body no longer decoding), or the COPY's own error.
    await abandon()
    throw error
  }
  stream.end()
  return applied
}
