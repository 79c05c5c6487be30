import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './executor.ts'
import { TEXT_BLOCK_MS, textBlockOf, textFilterProbes } from '@tracewell/text-filter'
import { recomputeSessions } from './session-summaries.ts'
import { notTracewellTrace } from './tracewell-calls.ts'

// The trace list and sessions of the query API (docs/api.md#trace-queries). The list and
// sessions read trace_summaries, one row per trace that the writer keeps (trace-summaries.ts);
// filters on what only spans hold (a span's name or attribute, text in prompts and completions)
// look into the candidate trace's spans through the primary key.

export type TraceSort = 'time' | 'duration' | 'cost' | 'tokens' | 'score'

/** Traces with a score of this name: its number within [min, max], or its label equal to value. */
export interface TraceScoreFilter {
  name: string
  min?: number | undefined
  max?: number | undefined
  value?: string | undefined
}

export interface TraceSearch {
  projectId: string
  limit: number
  from?: Date | undefined
  to?: Date | undefined
  service?: string | undefined
  model?: string | undefined
  vendor?: string | undefined
  status?: 'error' | 'ok' | undefined
  /** Contained (case-insensitive) in the root span's name or any span's name. */
  name?: string | undefined
  /** Each must hold on one span (its attributes or its resource's): key = value, compared as text. */
  attributes?: ReadonlyArray<{ key: string; value: string }> | undefined
  sessionId?: string | undefined
  userId?: string | undefined
  minDurationMs?: number | undefined
  maxDurationMs?: number | undefined
  /** A trace whose cost is unknown (null) matches neither bound: it could be anything. */
  minCostUsd?: number | undefined
  maxCostUsd?: number | undefined
  /** On total tokens; a trace whose tokens are unknown (null) matches neither bound. */
  minTokens?: number | undefined
  maxTokens?: number | undefined
  /**
   * Contained (case-insensitive) in the text of a span's attributes (prompts, completions), its
   * events (names and attributes: the Langtrace SDKs record prompts as events) or its status
   * message (an exception's), its words as whole words (@tracewell/text-filter).
   */
  text?: string | undefined
  score?: TraceScoreFilter | undefined
  /** The score whose average a `score` sort orders by (give `score` too: the traces that have one). */
  sortScoreName?: string | undefined
  sort: TraceSort
  order: 'asc' | 'desc'
  cursor?: TraceSearchCursor | undefined
  /** Also Tracewell's own traces (playground, experiments, judges: tracewell-calls.ts); left out by default. */
  includeTracewellCalls?: boolean | undefined
}

/** Where a page ended: the last row's sort value (as text) and trace id. */
export interface TraceSearchCursor {
  value: string
  traceId: string
}

export interface TraceRowDto {
  traceId: string
  name: string
  serviceName: string | null
  startTime: string
  endTime: string
  durationMs: number
  spanCount: number
  errorCount: number
  models: string[]
  /** Null when no span of the trace reported a count: unknown, not 0. */
  inputTokens: number | null
  outputTokens: number | null
  totalTokens: number | null
  costUsd: number | null
  /** A span of the trace has estimated token counts (and so its cost is estimated too). */
  tokensEstimated: boolean
  sessionId: string | null
  userId: string | null
}

interface TraceRow {
  trace_id: string
  name: string
  service_name: string | null
  start_us: string
  end_us: string
  duration_us: string
  span_count: number
  error_count: number
  models: string[]
  input_tokens: string | null
  output_tokens: string | null
  total_tokens: string | null
  cost_usd: string | null
  tokens_estimated: boolean
  session_id: string | null
  user_id: string | null
  sort_value: string
}

// Unknown costs and token counts (null) sort last in both directions. One plain index a column
// serves both (migration 2026-12-06T0800, scanned backwards for descending), so a page reads the
// known values first and then the unknown ones by trace id: two keyset phases over the same index.
// A cursor in the second phase carries the value that sorted them last before there were two
// phases, below every value descending and above them ascending, so that cursors stay as they were.
const UNKNOWN_COST = { desc: '-1', asc: '100000000000000000000000000000' }
const UNKNOWN_TOKENS = { desc: '-1', asc: '9223372036854775807' }

type SortColumn = {
  expression: RawBuilder<unknown>
  cast: (value: string) => RawBuilder<unknown>
  /** For a column that may be null (unknown), the cursor value of its null rows in each direction. */
  unknownCursorValue?: { desc: string; asc: string }
}


/** Each sort's expression, and the cast that reads a cursor's value back in its type. */
function sortColumn(sort: Exclude<TraceSort, 'score'>): SortColumn {
  switch (sort) {
    case 'time':
      return { expression: sql`t.start_time`, cast: (value) => sql`${value}::timestamptz` }
    case 'duration':
      return { expression: sql`t.duration_us`, cast: (value) => sql`${value}::bigint` }
    case 'cost':
      return { expression: sql`t.cost_usd`, cast: (value) => sql`${value}::numeric`, unknownCursorValue: UNKNOWN_COST }
    case 'tokens':
      return { expression: sql`t.total_tokens`, cast: (value) => sql`${value}::bigint`, unknownCursorValue: UNKNOWN_TOKENS }
  }
}

/**
 * Whether `text` has a word the trace word filters can look for (letters or digits; see
 * text-filter.ts). Text without one (`'`, `%`, `=`) would be looked for in every span of the
 * project, so the query API refuses it.
 */
export function hasSearchableWord(text: string): boolean {
  return textFilterProbes(text).length > 0
}

/** The average of the trace's scores of this name (-Infinity without one: never null, which a cursor could not pass). */
const scoreSort = (name: string): SortColumn => ({
  expression: sql`coalesce((select avg(sc.value) from scores sc where sc.project_id = t.project_id and sc.trace_id = t.trace_id and sc.name = ${name}), '-Infinity'::float8)`,
  cast: (value: string) => sql`${value}::float8`,
})

/** `text` for LIKE, its wildcards taken literally. */
const likePattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

// A trace's spans, found by primary key within the trace's own time: every span starts at or
// after the trace's start (its earliest span's) and no later than its end (the latest end; the
// receivers refuse a span that ends before it starts). The bounds let Postgres skip at run time
// every day partition of `spans` but the trace's (one or two), where without them each trace
// looked into every partition's key (35 index probes a trace at 30 days).
const spansOfTrace = sql`s.project_id = t.project_id and s.trace_id = t.trace_id and s.start_time >= t.start_time and s.start_time <= t.end_time`

/** The conditions that a word filter (a trace's or a block's, varbit) holds each probe: bit `probe mod its length` set. */
const filterHolds = (filter: RawBuilder<unknown>, probes: readonly number[]): RawBuilder<unknown>[] =>
  probes.map((probe) => sql`get_bit(${filter}, (${probe}::bigint & (length(${filter}) - 1))::integer) = 1`)

/** What a trace must be to be listed: the search without its page and order (also an evaluator's filter). */
export type TraceFilter = Omit<TraceSearch, 'limit' | 'sort' | 'order' | 'cursor' | 'sortScoreName' | 'includeTracewellCalls'>

/** The conditions on `trace_summaries t` (and, through it, the trace's spans and scores) of a filter. */
export function traceFilterConditions(search: TraceFilter): RawBuilder<unknown>[] {
  const where: RawBuilder<unknown>[] = [sql`t.project_id = ${search.projectId}`]
  if (search.from) where.push(sql`t.start_time >= ${search.from}`)
  if (search.to) where.push(sql`t.start_time < ${search.to}`)
  if (search.service) where.push(sql`${search.service} = any(t.services)`)
  // A model asked for or one that answered (a dated version), in any case; a vendor in any case.
  if (search.model) where.push(sql`exists (select 1 from unnest(t.models || t.response_models) as m where lower(m) = lower(${search.model}))`)
  if (search.vendor) where.push(sql`exists (select 1 from unnest(t.vendors) as v where lower(v) = lower(${search.vendor}))`)
  if (search.status === 'error') where.push(sql`t.error_count > 0`)
  if (search.status === 'ok') where.push(sql`t.error_count = 0`)
  if (search.sessionId) where.push(sql`t.session_id = ${search.sessionId}`)
  if (search.userId) where.push(sql`t.user_id = ${search.userId}`)
  if (search.minDurationMs !== undefined) where.push(sql`t.duration_us >= ${Math.ceil(search.minDurationMs * 1000)}`)
  if (search.maxDurationMs !== undefined) where.push(sql`t.duration_us <= ${Math.floor(search.maxDurationMs * 1000)}`)
  if (search.minCostUsd !== undefined) where.push(sql`t.cost_usd >= ${search.minCostUsd}`)
  if (search.maxCostUsd !== undefined) where.push(sql`t.cost_usd <= ${search.maxCostUsd}`)
  if (search.minTokens !== undefined) where.push(sql`t.total_tokens >= ${search.minTokens}`)
  if (search.maxTokens !== undefined) where.push(sql`t.total_tokens <= ${search.maxTokens}`)
  if (search.name) {
    const pattern = likePattern(search.name)
    where.push(sql`(t.name ilike ${pattern} or exists (select 1 from spans s where ${spansOfTrace} and s.name ilike ${pattern}))`)
  }
  for (const { key, value } of search.attributes ?? []) {
    // A stored value is {stringValue: …}, {intValue: …}, …: its one member, as text (or a plain
    // value, as rows written before the AnyValue form hold).
    const matches = (column: RawBuilder<unknown>) => sql`(case jsonb_typeof(${column} -> ${key})
      when 'object' then exists (select 1 from jsonb_each(${column} -> ${key}) v where v.value #>> '{}' = ${value})
      else (${column} -> ${key}) #>> '{}' = ${value} end)`
    where.push(sql`exists (select 1 from spans s where ${spansOfTrace} and (${matches(sql`s.attributes`)} or ${matches(sql`s.resource_attributes`)}))`)
  }
  if (search.score) {
    const { name, min, max, value } = search.score
    const holds: RawBuilder<unknown>[] = [sql`sc.project_id = t.project_id`, sql`sc.trace_id = t.trace_id`, sql`sc.name = ${name}`]
    if (min !== undefined) holds.push(sql`sc.value >= ${min}`)
    if (max !== undefined) holds.push(sql`sc.value <= ${max}`)
    if (value !== undefined) holds.push(sql`sc.string_value = ${value}`)
    where.push(sql`exists (select 1 from scores sc where ${sql.join(holds, sql` and `)})`)
  }
  if (search.text) {
    // The trace's word filter first (no span read), then its spans' text.
    const probes = textFilterProbes(search.text)
    if (probes.length > 0) {
      where.push(sql`t.text_filter is not null`, ...filterHolds(sql`t.text_filter`, probes))
    }
    const pattern = likePattern(search.text)
    where.push(sql`exists (select 1 from spans s where ${spansOfTrace} and (s.attributes::text ilike ${pattern} or s.events::text ilike ${pattern} or s.status_message ilike ${pattern}))`)
  }
  return where
}

const traceColumns = sql`t.trace_id, t.name, t.service_name,
  (extract(epoch from t.start_time) * 1000000)::bigint::text as start_us, (extract(epoch from t.end_time) * 1000000)::bigint::text as end_us,
  t.duration_us, t.span_count, t.error_count, t.models, t.input_tokens, t.output_tokens, t.total_tokens, t.cost_usd, t.tokens_estimated, t.session_id, t.user_id`

const microsToIso = (micros: string): string => {
  const value = BigInt(micros)
  const millis = value / 1000n
  const rest = (value % 1000n + 1000n) % 1000n
  return new Date(Number(millis)).toISOString().replace('Z', `${String(rest).padStart(3, '0')}Z`)
}

const numberOrNull = (text: string | null): number | null => (text === null ? null : Number(text))

function toTraceRow(row: TraceRow): TraceRowDto {
  return {
    traceId: row.trace_id,
    name: row.name,
    serviceName: row.service_name,
    startTime: microsToIso(row.start_us),
    endTime: microsToIso(row.end_us),
    durationMs: Number(row.duration_us) / 1000,
    spanCount: row.span_count,
    errorCount: row.error_count,
    models: row.models,
    inputTokens: numberOrNull(row.input_tokens),
    outputTokens: numberOrNull(row.output_tokens),
    totalTokens: numberOrNull(row.total_tokens),
    costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
    tokensEstimated: row.tokens_estimated,
    sessionId: row.session_id,
    userId: row.user_id,
  }
}

const BLOCK_INTERVAL = sql.raw(`interval '${TEXT_BLOCK_MS / 1000} seconds'`)

/**
 * The blocks of ten minutes of the project (trace_text_blocks) in the search's window whose word
 * filter may hold every word of its text, in the order of the page: a full-text search reads these
 * first, one row a block, and then only their traces, each block's through the summaries' time
 * index. Ordered by block, the traces of a time-sorted page come block by block, so a page of the
 * newest stops at the first blocks that fill it.
 */
function textBlocksHolding(search: TraceSearch, probes: readonly number[], direction: RawBuilder<unknown>): RawBuilder<unknown> {
  const where: RawBuilder<unknown>[] = [sql`b.project_id = ${search.projectId}`]
  if (search.from) where.push(sql`b.block >= ${new Date(textBlockOf(search.from.getTime()))}`)
  if (search.to) where.push(sql`b.block < ${search.to}`)
  where.push(...filterHolds(sql`b.filter`, probes))
  return sql`select b.block from trace_text_blocks b where ${sql.join(where, sql` and `)} order by b.block ${direction}`
}

/** One page of the trace list, and the cursor of the next (null on the last). */
export async function searchTraces(db: Executor, search: TraceSearch): Promise<{ traces: TraceRowDto[]; next: TraceSearchCursor | null }> {
  const { expression, cast, unknownCursorValue } = search.sort === 'score' ? scoreSort(search.sortScoreName ?? '') : sortColumn(search.sort)
  const where = traceFilterConditions(search)
  if (search.includeTracewellCalls !== true) where.push(notTracewellTrace)
  const { cursor, limit } = search
  const past = sql.raw(search.order === 'desc' ? '<' : '>')
  const afterCursor = cursor ? [sql`(${expression}, t.trace_id) ${past} (${cast(cursor.value)}, ${cursor.traceId})`] : []
  if (unknownCursorValue === undefined) return pageOf(search, await searchPhase(db, search, expression, [...where, ...afterCursor], limit + 1))

  const unknownValue = unknownCursorValue[search.order]
  const cursorAmongUnknown = cursor !== undefined && cursor.value === unknownValue
  const known = cursorAmongUnknown ? [] : await searchPhase(db, search, expression, [...where, sql`${expression} is not null`, ...afterCursor], limit + 1)
  if (known.length > limit) return pageOf(search, known)
  // Then the unknown rows, after the known ones or after the cursor's trace among them.
  const afterUnknown = cursorAmongUnknown ? [sql`t.trace_id ${past} ${cursor.traceId}`] : []
  const unknown = await searchPhase(db, search, expression, [...where, sql`${expression} is null`, ...afterUnknown], limit + 1 - known.length)
  return pageOf(search, [...known, ...unknown.map((row) => ({ ...row, sort_value: unknownValue }))])
}

function pageOf(search: TraceSearch, rows: TraceRow[]): { traces: TraceRowDto[]; next: TraceSearchCursor | null } {
  const page = rows.slice(0, search.limit)
  const last = page.at(-1)
  const next = rows.length > search.limit && last ? { value: last.sort_value, traceId: last.trace_id } : null
  return { traces: page.map(toTraceRow), next }
}

/** Up to `limit` rows meeting the conditions, in the sort's order. */
async function searchPhase(db: Executor, search: TraceSearch, expression: RawBuilder<unknown>, where: RawBuilder<unknown>[], limit: number): Promise<TraceRow[]> {
  const direction = sql.raw(search.order === 'desc' ? 'desc' : 'asc')
  // With words to look for, the project's blocks that may hold them first, then each block's
  // matching traces. The conditions stay inside the lateral: with them above it, a page of a word
  // in every trace was some fifty times slower (bench:query; docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
  const probes = search.text ? textFilterProbes(search.text) : []
  const matching = sql.join(where, sql` and `)
  const traces = probes.length === 0
    ? sql`trace_summaries t where ${matching}`
    : sql`(${textBlocksHolding(search, probes, direction)}) as b
      cross join lateral (
        select * from trace_summaries t
        where ${matching} and t.start_time >= b.block and t.start_time < b.block + ${BLOCK_INTERVAL}
        offset 0
      ) as t`
  const blockFirst = probes.length > 0 && search.sort === 'time' ? sql`b.block ${direction}, ` : sql``
  const { rows } = await sql<TraceRow>`
    select ${traceColumns}, ${expression}::text as sort_value
    from ${traces}
    order by ${blockFirst}${expression} ${direction}, t.trace_id ${direction}
    limit ${limit}`.execute(db)
  return rows
}

export interface SessionRowDto {
  sessionId: string
  userId: string | null
  firstSeen: string
  lastSeen: string
  traceCount: number
  /** Null when no trace of the session reported a count. */
  totalTokens: number | null
  costUsd: number | null
}

export interface SessionSearch {
  projectId: string
  limit: number
  from?: Date | undefined
  to?: Date | undefined
  userId?: string | undefined
  /** Bounds (inclusive) on the session's figures: duration from first to last seen, total tokens, cost. Unknown (null) figures match no bound. */
  minDurationMs?: number | undefined
  maxDurationMs?: number | undefined
  minCostUsd?: number | undefined
  maxCostUsd?: number | undefined
  minTokens?: number | undefined
  maxTokens?: number | undefined
  cursor?: { lastSeen: string; sessionId: string } | undefined
  /** Also Tracewell's own traces (tracewell-calls.ts); left out by default. */
  includeTracewellCalls?: boolean | undefined
}

/** The bounds of a session search on its figures, given their expressions (summary columns, or the aggregates over its traces). */
function sessionBounds(search: SessionSearch, figures: { durationUs: RawBuilder<unknown>; tokens: RawBuilder<unknown>; cost: RawBuilder<unknown> }): RawBuilder<unknown>[] {
  const bounds: RawBuilder<unknown>[] = []
  if (search.minDurationMs !== undefined) bounds.push(sql`${figures.durationUs} >= ${Math.ceil(search.minDurationMs * 1000)}`)
  if (search.maxDurationMs !== undefined) bounds.push(sql`${figures.durationUs} <= ${Math.floor(search.maxDurationMs * 1000)}`)
  if (search.minTokens !== undefined) bounds.push(sql`${figures.tokens} >= ${search.minTokens}`)
  if (search.maxTokens !== undefined) bounds.push(sql`${figures.tokens} <= ${search.maxTokens}`)
  if (search.minCostUsd !== undefined) bounds.push(sql`${figures.cost} >= ${search.minCostUsd}`)
  if (search.maxCostUsd !== undefined) bounds.push(sql`${figures.cost} <= ${search.maxCostUsd}`)
  return bounds
}

const durationUsOf = (first: RawBuilder<unknown>, last: RawBuilder<unknown>) => sql`(extract(epoch from ${last} - ${first}) * 1000000)`

/**
 * Sessions, most recently active first. Unfiltered, from session_summaries (one row per session,
 * kept by the writer); with from, to or a user, grouped from the trace summaries that match,
 * since the figures are then of those traces only. Tracewell's own calls carry no session
 * (llmCallSpan of @tracewell/llm-calls), so session_summaries never hold them; the traces'
 * grouping leaves them out all the same unless asked.
 */
export async function searchSessions(db: Executor, search: SessionSearch): Promise<{ sessions: SessionRowDto[]; next: { lastSeen: string; sessionId: string } | null }> {
  const rows = search.from || search.to || search.userId ? await sessionsFromTraces(db, search) : await sessionsFromSummaries(db, search)
  const page = rows.slice(0, search.limit)
  const last = page.at(-1)
  return {
    sessions: page.map((row) => ({
      sessionId: row.session_id,
      userId: row.user_id,
      firstSeen: microsToIso(row.first_us),
      lastSeen: microsToIso(row.last_us),
      traceCount: Number(row.traces),
      totalTokens: numberOrNull(row.tokens),
      costUsd: row.cost === null ? null : Number(row.cost),
    })),
    next: rows.length > search.limit && last ? { lastSeen: last.last_seen, sessionId: last.session_id } : null,
  }
}

interface SessionRow {
  session_id: string
  user_id: string | null
  first_us: string
  last_us: string
  last_seen: string
  traces: string
  tokens: string | null
  cost: string | null
}

async function sessionsFromSummaries(db: Executor, search: SessionSearch): Promise<SessionRow[]> {
  const where: RawBuilder<unknown>[] = [
    sql`s.project_id = ${search.projectId}`,
    ...sessionBounds(search, { durationUs: durationUsOf(sql`s.first_seen`, sql`s.last_seen`), tokens: sql`s.total_tokens`, cost: sql`s.cost_usd` }),
  ]
  if (search.cursor) where.push(sql`(s.last_seen, s.session_id) < (${search.cursor.lastSeen}::timestamptz, ${search.cursor.sessionId})`)
  const { rows } = await sql<SessionRow>`
    select s.session_id, s.user_id, (extract(epoch from s.first_seen) * 1000000)::bigint::text as first_us,
      (extract(epoch from s.last_seen) * 1000000)::bigint::text as last_us, s.last_seen::text as last_seen,
      s.trace_count as traces, s.total_tokens as tokens, s.cost_usd as cost
    from session_summaries s
    where ${sql.join(where, sql` and `)}
    order by s.last_seen desc, s.session_id desc
    limit ${search.limit + 1}`.execute(db)
  return rows
}

async function sessionsFromTraces(db: Executor, search: SessionSearch): Promise<SessionRow[]> {
  const where: RawBuilder<unknown>[] = [sql`t.project_id = ${search.projectId}`, sql`t.session_id is not null`]
  if (search.from) where.push(sql`t.start_time >= ${search.from}`)
  if (search.to) where.push(sql`t.start_time < ${search.to}`)
  if (search.userId) where.push(sql`t.user_id = ${search.userId}`)
  if (search.includeTracewellCalls !== true) where.push(notTracewellTrace)
  const having = sessionBounds(search, { durationUs: durationUsOf(sql`min(t.start_time)`, sql`max(t.end_time)`), tokens: sql`sum(t.total_tokens)`, cost: sql`sum(t.cost_usd)` })
  if (search.cursor) having.push(sql`(max(t.end_time), t.session_id) < (${search.cursor.lastSeen}::timestamptz, ${search.cursor.sessionId})`)
  const { rows } = await sql<SessionRow>`
    select t.session_id, (array_agg(t.user_id order by t.start_time) filter (where t.user_id is not null))[1] as user_id,
      (extract(epoch from min(t.start_time)) * 1000000)::bigint::text as first_us,
      (extract(epoch from max(t.end_time)) * 1000000)::bigint::text as last_us,
      max(t.end_time)::text as last_seen, count(*) as traces, sum(t.total_tokens) as tokens, sum(t.cost_usd) as cost
    from trace_summaries t
    where ${sql.join(where, sql` and `)}
    group by t.session_id
    ${having.length === 0 ? sql`` : sql`having ${sql.join(having, sql` and `)}`}
    order by max(t.end_time) desc, t.session_id desc
    limit ${search.limit + 1}`.execute(db)
  return rows
}

/** A session's traces, oldest first (at most `limit`). */
export async function findSessionTraces(db: Executor, projectId: string, sessionId: string, limit: number): Promise<TraceRowDto[]> {
  const { rows } = await sql<TraceRow>`
    select ${traceColumns}, '' as sort_value from trace_summaries t
    where t.project_id = ${projectId} and t.session_id = ${sessionId}
    order by t.start_time, t.trace_id
    limit ${limit}`.execute(db)
  return rows.map(toTraceRow)
}

/** Deletes a trace's spans, its summary and its scores, and recomputes its session's row; the number of spans deleted. */
export async function deleteTrace(db: Executor, projectId: string, traceId: string): Promise<number> {
  await sql`delete from scores where project_id = ${projectId} and trace_id = ${traceId}`.execute(db)
  const { rows } = await sql<{ session_id: string | null }>`
    delete from trace_summaries where project_id = ${projectId} and trace_id = ${traceId} returning session_id`.execute(db)
  const sessionId = rows[0]?.session_id
  if (sessionId) await recomputeSessions(db, [{ project_id: projectId, session_id: sessionId }])
  const result = await sql`delete from spans where project_id = ${projectId} and trace_id = ${traceId}`.execute(db)
  return Number(result.numAffectedRows ?? 0n)
}
