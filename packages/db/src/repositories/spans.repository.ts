import { sql } from 'kysely'
import type pg from 'pg'
import { from as copyFrom, type CopyStreamQuery } from 'pg-copy-streams'
import { poolOf, type Db } from '../create-db.ts'
import type { CostSource } from '../database.ts'
import { inTransaction, type Executor } from './executor.ts'
import { releaseCopyChunks, spanCopyStatement, SpanCopyEncoder } from './span-copy.ts'
import { TraceSummaryBatch, traceSummaryUpsert, upsertTraceSummaries } from './trace-summaries.ts'
import { recomputeSessionsStatement, refreshSessionSummaries } from './session-summaries.ts'
import { UsageRollupBatch, upsertUsageRollups, usageRollupUpsert } from './usage-rollups.ts'
import { nanosToIsoMicros, serializeSpanRows, spanRowColumns, type ProjectSpanSource, type SpanFields, type SpanInsert, type SpanOriginFields } from './span-rows.ts'

export { nanosToIsoMicros, serializeSpanRows, type ProjectSpanSource, type SpanFields, type SpanInsert } from './span-rows.ts'

const columnList = sql.raw(spanRowColumns.map(([name]) => name).join(', '))
const recordsetShape = sql.raw(spanRowColumns.map(([name, type]) => `${name} ${type}`).join(', '))

/**
 * Stores a batch in one statement, idempotently: a span already stored (same project, trace and
 * span id) is skipped, so a redelivered queue job never makes a second row. Returns the rows
 * inserted. In the caller's transaction, or one of its own: the summaries are kept in the one
 * that stores the spans.
 */
export async function insertSpans(db: Executor, spans: readonly SpanInsert[]): Promise<number> {
  return (await inTransaction(db, (trx) => insertSourcesByStatement(trx, projectRuns(spans)))).inserted
}

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
 * Stores rows serialised by serializeSpanRows in one idempotent statement. The batch travels as one text parameter unpacked by
 * jsonb_to_recordset, which avoids the 65,535-parameter limit of multi-row VALUES and works the
 * same on Postgres and PGlite. Malformed text fails with a data exception (22P02). Returns the
 * rows inserted.
 */
export async function insertSerializedSpanRows(db: Executor, rowsJson: readonly string[]): Promise<number> {
  const rows = rowsJson.filter((chunk) => chunk !== '').join(',')
  if (rows === '') return 0
  const result = await sql`
    insert into spans (${columnList})
    select ${columnList} from jsonb_to_recordset(('[' || ${rows}::text || ']')::jsonb) as batch(${recordsetShape})
    on conflict (project_id, trace_id, span_id) do nothing`.execute(db)
  return Number(result.numAffectedRows ?? 0n)
}

/**
 * Stores a batch like insertSpans, idempotently, saying how many spans were new; on Postgres through a
 * binary COPY: the rows arrive in their stored form instead of as one JSON document that
 * jsonb_to_recordset unpacks, which the database does in a good deal less time.
 *
 * COPY has no ON CONFLICT, so it is optimistic: one transaction, and if a span of the batch is
 * already stored (a queue job redelivered after a crash, or the same span twice in the batch) the
 * unique violation rolls it back and the batch is stored by insertSpans's statement instead, which
 * skips those spans, in statements of about 5,000 spans. Such a batch costs the failed COPY on
 * top, a price paid only on redelivery. Any other error rolls back and is thrown unchanged, its
 * SQLSTATE intact for the caller's retry decision. On PGlite (embedded, no connection to save
 * work on) it is that statement.
 *
 * The sources' spans are asked for once for the COPY, and once more only for the fallback.
 */
export async function storeSpanSources(db: Db, sources: readonly ProjectSpanSource[]): Promise<{ inserted: number; duplicates: number }> {
  if (sources.length === 0) return { inserted: 0, duplicates: 0 }
  const copied = await copySpanSources(db, sources)
  if (copied !== undefined) return { inserted: copied, duplicates: 0 }
  return insertSpanSourcesByStatement(db, sources)
}

/**
 * storeSpanSources' first half, for a caller that can produce the spans again only at a cost
 * (the writer lets each request body go once its spans are encoded, and reads it again from
 * Redis for the fallback): the rows the COPY inserted, or undefined when the batch must go by
 * statement instead (a span already stored, a value only the statement path stores exactly, or
 * PGlite), with nothing stored. The sources' spans are asked for at most once.
 */
export async function copySpanSources(db: Db, sources: readonly ProjectSpanSource[]): Promise<number | undefined> {
  const pool = poolOf.get(db)
  if (pool === undefined) return undefined
  if (sources.length === 0) return 0
  // Every span of a COPY is new (else it rolls back), so all of them are folded into the summaries.
  const summaries = new TraceSummaryBatch()
  const rollups = new UsageRollupBatch()
  const encoder = new SpanCopyEncoder({
    span(projectId, span) {
      summaries.add(projectId, span, false)
      rollups.add(projectId, span)
    },
    // The words of full-text search, read from the bytes the COPY sends.
    attributes: (bytes, start, end) => summaries.addWordsOfLastSpan(bytes, start, end),
  })
  return copyInTransaction(pool, encoder, sources, summaries, rollups)
}

/** storeSpanSources' fallback: idempotent statements, in a transaction of their own. */
export function insertSpanSourcesByStatement(db: Db, sources: readonly ProjectSpanSource[]): Promise<{ inserted: number; duplicates: number }> {
  return db.transaction().execute((trx) => insertSourcesByStatement(trx, sources))
}

/**
 * The statement path, one statement per SPANS_PER_STATEMENT spans (a larger source alone), and
 * the summaries of the spans each statement inserted; in the caller's transaction.
 */
async function insertSourcesByStatement(db: Executor, sources: readonly ProjectSpanSource[]): Promise<{ inserted: number; duplicates: number }> {
  const summaries = new TraceSummaryBatch()
  const rollups = new UsageRollupBatch()
  let inserted = 0
  let spans = 0
  let statement: Array<{ projectId: string; spans: readonly SpanFields[] }> = []
  let statementSpans = 0
  const flush = async () => {
    const stored = await insertSerializedSpanRowsReturningKeys(db, statement.map((run) => serializeSpanRows(run.projectId, run.spans)))
    inserted += stored.size
    for (const run of statement) {
      for (const span of run.spans) {
        if (!stored.has(spanKey(run.projectId, span.traceId, span.spanId))) continue
        summaries.add(run.projectId, span)
        rollups.add(run.projectId, span)
      }
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
  if ((await upsertTraceSummaries(db, summaries)) > 0) await refreshSessionSummaries(db, summaries)
  await upsertUsageRollups(db, rollups)
  return { inserted, duplicates: spans - inserted }
}

const spanKey = (projectId: string, traceId: string, spanId: string) => `${projectId}\u0000${traceId}\u0000${spanId}`

/** insertSerializedSpanRows, answering with the keys of the rows it inserted. */
async function insertSerializedSpanRowsReturningKeys(db: Executor, rowsJson: readonly string[]): Promise<Set<string>> {
  const rows = rowsJson.filter((chunk) => chunk !== '').join(',')
  if (rows === '') return new Set()
  const result = await sql<{ project_id: string; trace_id: string; span_id: string }>`
    insert into spans (${columnList})
    select ${columnList} from jsonb_to_recordset(('[' || ${rows}::text || ']')::jsonb) as batch(${recordsetShape})
    on conflict (project_id, trace_id, span_id) do nothing
    returning project_id, trace_id, span_id`.execute(db)
  return new Set(result.rows.map((row) => spanKey(row.project_id, row.trace_id, row.span_id)))
}

// The statement path sends its rows as one text parameter: this bounds that parameter, and so
// the work of one statement.
const SPANS_PER_STATEMENT = 5_000

/** storeSpanSources for spans at hand, each naming its project; returns the rows inserted. */
export async function storeSpans(db: Db, spans: readonly SpanInsert[]): Promise<number> {
  if (spans.length === 0) return 0
  return (await storeSpanSources(db, projectRuns(spans))).inserted
}

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
  summaries: TraceSummaryBatch,
  rollups: UsageRollupBatch,
): Promise<number | undefined> {
  const client = await pool.connect()
  // A connection lost while checked out emits 'error' on the client, which without a listener would
  // crash the process; it also means the client must be destroyed, not returned to the pool.
  let broken: Error | undefined
  const onError = (error: Error) => {
    broken = error
  }
  client.on('error', onError)
  try {
    await client.query('begin')
    const rows = await streamSources(client.query(copyFrom(spanCopyStatement)), encoder, sources)
    if (rows === undefined) {
      await client.query('rollback')
      return undefined
    }
    const upsert = traceSummaryUpsert(summaries)
    // Named, so that each connection parses and plans them once, not once a batch.
    const sessions = await client.query({ name: 'trace-summaries-upsert', text: upsert.text, values: upsert.values })
    if (sessions.rowCount !== 0) await client.query({ name: 'session-summaries-recompute', text: recomputeSessionsStatement, values: upsert.values })
    if (rollups.size > 0) {
      const rollupUpsert = usageRollupUpsert(rollups)
      await client.query({ name: 'usage-rollups-upsert', text: rollupUpsert.text, values: rollupUpsert.values })
    }
    await client.query('commit')
    releaseCopyChunks(encoder.chunks)
    return rows
  } catch (error) {
    try {
      await client.query('rollback')
    } catch (rollbackError) {
      broken ??= rollbackError as Error
    }
    if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) return undefined
    throw error
  } finally {
    client.off('error', onError)
    client.release(broken)
  }
}

/**
 * Encodes the sources into the COPY one at a time, writing each chunk as soon as it is full, and
 * resolves with the COPY's row count once Postgres has applied it. Streamed so that Postgres
 * parses and inserts a job's first rows while the writer encodes the later ones: encoded whole
 * first, a 2,000-span job kept the writer busy for ~30 ms with Postgres idle, and then Postgres
 * busy with the writer idle (docs/benchmarks.md). It yields to the event loop after each chunk,
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
async function streamSources(stream: CopyStreamQuery, encoder: SpanCopyEncoder, sources: readonly ProjectSpanSource[]): Promise<number | undefined> {
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
    for (const source of sources) {
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

export async function countSpans(db: Executor, projectId?: string): Promise<number> {
  let query = db.selectFrom('spans').select((eb) => eb.fn.countAll<string>().as('count'))
  if (projectId !== undefined) query = query.where('project_id', '=', projectId)
  const { count } = await query.executeTakeFirstOrThrow()
  return Number(count)
}

/** A stored span as the trace API returns it: every stored field, attributes in the map form. */
export interface SpanDto extends SpanOriginFields {
  llmResponseModel: string | null
  cachedInputTokens: number | null
  cacheWriteInputTokens: number | null
  reasoningTokens: number | null
  sessionId: string | null
  userId: string | null
  inputCostUsd: number | null
  outputCostUsd: number | null
  totalCostUsd: number | null
  costSource: CostSource | null
  traceId: string
  spanId: string
  parentSpanId: string | null
  name: string
  kind: number
  startTime: string
  endTime: string
  startTimeUnixNano: string
  endTimeUnixNano: string
  durationNs: string
  traceState: string | null
  status: { code: number; message: string | null }
  attributes: Record<string, unknown>
  resourceAttributes: Record<string, unknown>
  events: unknown[]
  links: unknown[]
  receivedAt: string
}

const toNumberOrNull = (value: string | null): number | null => (value === null ? null : Number(value))
/** Whole microseconds since the epoch as nanoseconds, in decimal (0 stays "0", not "0000"). */
const microsToNanos = (micros: string): string => (micros === '0' ? '0' : `${micros}000`)
const microsToIso = (micros: string): string => nanosToIsoMicros(microsToNanos(micros))

/** A trace's rows, in start order. */
function traceRows(db: Executor, projectId: string, traceId: string) {
  return db
    .selectFrom('spans')
    .selectAll()
    // Dates in JavaScript hold milliseconds; the epoch in microseconds keeps the stored precision.
    .select([
      sql<string>`(extract(epoch from start_time) * 1000000)::bigint::text`.as('start_us'),
      sql<string>`(extract(epoch from end_time) * 1000000)::bigint::text`.as('end_us'),
    ])
    .where('project_id', '=', projectId)
    .where('trace_id', '=', traceId)
    .orderBy('start_time')
    .orderBy('span_id')
    .execute()
}

type TraceRow = Awaited<ReturnType<typeof traceRows>>[number]

/** A stored row as the trace API returns it, without its four JSON columns. */
function spanFieldsOf(row: TraceRow): Omit<SpanDto, 'attributes' | 'resourceAttributes' | 'events' | 'links'> {
  const { attributes: _a, resourceAttributes: _r, events: _e, links: _l, ...fields } = spanDtoOf(row)
  return fields
}

function spanDtoOf(row: TraceRow): SpanDto {
  return {
    traceId: row.trace_id,
    spanId: row.span_id,
    parentSpanId: row.parent_span_id,
    name: row.name,
    kind: row.kind,
    startTime: microsToIso(row.start_us),
    endTime: microsToIso(row.end_us),
    startTimeUnixNano: microsToNanos(row.start_us),
    endTimeUnixNano: microsToNanos(row.end_us),
    durationNs: row.duration_ns,
    traceState: row.trace_state,
    status: { code: row.status_code, message: row.status_message },
    serviceName: row.service_name,
    serviceVersion: row.service_version,
    scopeName: row.scope_name,
    scopeVersion: row.scope_version,
    llmVendor: row.llm_vendor,
    llmModel: row.llm_model,
    llmRequestType: row.llm_request_type,
    inputTokens: toNumberOrNull(row.input_tokens),
    outputTokens: toNumberOrNull(row.output_tokens),
    totalTokens: toNumberOrNull(row.total_tokens),
    llmResponseModel: row.llm_response_model,
    cachedInputTokens: toNumberOrNull(row.cached_input_tokens),
    cacheWriteInputTokens: toNumberOrNull(row.cache_write_input_tokens),
    reasoningTokens: toNumberOrNull(row.reasoning_tokens),
    sessionId: row.session_id,
    userId: row.user_id,
    inputCostUsd: toNumberOrNull(row.input_cost_usd),
    outputCostUsd: toNumberOrNull(row.output_cost_usd),
    totalCostUsd: toNumberOrNull(row.total_cost_usd),
    costSource: row.cost_source,
    attributes: row.attributes as Record<string, unknown>,
    resourceAttributes: row.resource_attributes as Record<string, unknown>,
    events: row.events as unknown[],
    links: row.links as unknown[],
    receivedAt: row.received_at.toISOString(),
  }
}

export async function findTraceSpans(db: Executor, projectId: string, traceId: string): Promise<SpanDto[]> {
  return (await traceRows(db, projectId, traceId)).map(spanDtoOf)
}

interface JsonColumnsAsText {
  attributes_json: string
  resource_attributes_json: string
  events_json: string
  links_json: string
}

const jsonColumns = new Set(['attributes', 'resource_attributes', 'events', 'links'])
const scalarColumns = sql.raw([...spanRowColumns.map(([name]) => name).filter((name) => !jsonColumns.has(name)), 'received_at'].join(', '))

/**
 * A trace's spans as the JSON text of the trace API's `spans` array, or null when there are none.
 * The JSON columns (most of a span's bytes) go out as Postgres writes them, never parsed into
 * objects and written again: a 1,000-span trace costs its query and one string.
 */
export async function findTraceSpansJson(db: Executor, projectId: string, traceId: string): Promise<string | null> {
  // Every column but the four JSON ones, which come as text: the driver would parse jsonb.
  const { rows } = await sql<Omit<TraceRow, 'attributes' | 'resource_attributes' | 'events' | 'links'> & JsonColumnsAsText>`
    select ${scalarColumns}, (extract(epoch from start_time) * 1000000)::bigint::text as start_us, (extract(epoch from end_time) * 1000000)::bigint::text as end_us,
      attributes::text as attributes_json, resource_attributes::text as resource_attributes_json, events::text as events_json, links::text as links_json
    from spans where project_id = ${projectId} and trace_id = ${traceId}
    order by start_time, span_id`.execute(db)
  if (rows.length === 0) return null
  const spans = rows.map((row) => {
    const fields = JSON.stringify(spanFieldsOf({ ...row, attributes: {}, resource_attributes: {}, events: [], links: [] }))
    return `${fields.slice(0, -1)},"attributes":${row.attributes_json},"resourceAttributes":${row.resource_attributes_json},"events":${row.events_json},"links":${row.links_json}}`
  })
  return `[${spans.join(',')}]`
}
