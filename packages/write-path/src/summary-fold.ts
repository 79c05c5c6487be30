import { addWordsToTextBlocks, keepTraceDimensionCopies, recomputeSessions, sql, toStorableJson, transactionWithClient, wordsByBlock, wordsOfStoredTraces, type Db, type Executor, type TextBlockWords } from '@tracewell/db'
import type pg from 'pg'
import { textBlockOf, TextFilterWords } from '@tracewell/text-filter'
import { textArrayLiteral } from './array-literal.ts'
import { SealedSummaryDays } from './sealed-summary-days.ts'
import { copyData, SummaryCopyEncoder, summaryCopyStatement } from './summary-copy.ts'
import { traceDeltaOf } from './trace-delta-layout.ts'
import { mergeTraceDelta, type TraceDelta } from './trace-deltas.ts'
import { UsageCombinationMerge, type UsageCombination } from './usage-deltas.ts'

// The write path's second step: the summary deltas that stored batches left (summary-delta.ts)
// folded into trace_summaries, usage_rollups, session_summaries and the word filters of blocks of
// ten minutes (trace_text_blocks), in one transaction that also deletes them, so every delta is
// added exactly once whatever process dies when: a fold that does not commit leaves its deltas to
// the next one.
//
// One fold at a time, whoever runs it: a transaction-level advisory lock taken with try, so a
// second summariser (every writer runs one) skips its turn instead of waiting, and no writer's
// transaction ever touches these tables. Batches are merged in memory first (a trace's spans
// often come in several batches), so each summary row is written once per fold.
//
// Every statement is planned from the shapes of its keys, not from statistics (a table that was
// never analysed must not turn a lookup into a scan): rows are found by primary key or through a
// lateral subquery on an index, and the fold's transaction turns hash and merge joins off, so every
// join is a nested loop of index lookups, each pruned to the one day partition its key names. The
// rows are sent as JSON text (json_to_recordset: one parse, no jsonb built), one parameter however
// many rows.
//
// trace_summaries and session_summaries are partitioned by fold_day, the day the row was last
// written: a fold writes every row it makes or changes into today's partition (moving a row written
// on an earlier day), and finds stored rows through the days SealedSummaryDays names.

/** The advisory lock key of the fold (an arbitrary constant: 'tracewell summaries' hashed). */
export const FOLD_LOCK = 7_215_501_872_340_113n

export interface FoldLimits {
  /** Deltas are claimed, oldest first, until they hold this many traces (one at least). */
  maxTraces: number
  /** And at most this many deltas. */
  maxDeltas: number
}

/** SUMMARY_FOLD_MAX_TRACES's default (packages/config), and 500 deltas. */
export const DEFAULT_FOLD_LIMITS: FoldLimits = { maxTraces: 5_000, maxDeltas: 500 }

/** What one fold did; `busy` when another fold held the lock. */
export type FoldResult = { deltas: number; traces: number } | 'busy'

/**
 * Folds the oldest summary deltas into the summaries, in a transaction of its own; answers how
 * many deltas and distinct traces it folded (0 when none was waiting).
 */
export function foldSummaryDeltas(db: Db, limits: FoldLimits = DEFAULT_FOLD_LIMITS): Promise<FoldResult> {
  return transactionWithClient(db, async (trx, client) => {
    const { rows: lock } = await sql<{ held: boolean }>`select pg_try_advisory_xact_lock(${FOLD_LOCK}) as held`.execute(trx)
    if (lock[0]?.held !== true) return 'busy'
    return foldInTransaction(db, trx, client, limits)
  })
}

/**
 * The fold's work in the caller's transaction, which must hold the fold's lock (FOLD_LOCK, as a
 * transaction- or session-level advisory lock): an erasure folds what is pending before it takes
 * spans' figures back out of the summaries (erasure-batch.ts).
 */
export async function foldInTransaction(db: Db, trx: Executor, client: pg.PoolClient | undefined, limits: FoldLimits): Promise<{ deltas: number; traces: number }> {
  const sealed = sealedDaysOf(db)
  // The running sum is over a bounded number of the oldest deltas, so the claim reads no more.
  const { rows: claimed } = await sql<{ traces: string; usage: string }>`
    delete from summary_deltas where id in (
      select id from (
        select id, trace_count, sum(trace_count) over (order by id) as running
        from (select id, trace_count from summary_deltas order by id limit ${limits.maxDeltas}) as oldest) as claim
      where running - trace_count < ${limits.maxTraces})
    returning traces::text as traces, usage::text as usage`.execute(trx)
  if (claimed.length === 0) return { deltas: 0, traces: 0 }

  const traces = new Map<string, TraceDelta>()
  const words = new TraceWords()
  const usage = new UsageCombinationMerge()
  for (const row of claimed) {
    // Our own JSON, keys without escapes: JSON.parse reads it exactly (see @tracewell/json-text).
    for (const entry of JSON.parse(row.traces) as unknown[]) {
      const delta = traceDeltaOf(entry)
      const key = `${delta.project_id}\u0000${delta.trace_id}`
      const into = traces.get(key)
      if (into === undefined) traces.set(key, delta)
      else mergeTraceDelta(into, delta)
      words.add(key, delta)
    }
    for (const combination of JSON.parse(row.usage) as UsageCombination[]) usage.add(combination)
  }

  // Today by the database's clock once the lock is held: the partition every row is written to.
  // Never a day before one a fold has written into (a clock stepped back across a midnight): the
  // days before a fold's are sealed (sealed-summary-days.ts). The days after today's are the
  // partitions made ahead, empty unless that happened. `>= today + 1`, not `> today`: the planner
  // does not know a date is discrete, and kept today's partition for a scan under `>`.
  const { rows: [clock] } = await sql<{ today: string }>`select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD') as today`.execute(trx)
  const { rows: [later] } = await sql<{ day: string | null }>`select max(fold_day)::text as day from trace_summaries where fold_day >= ${clock!.today}::date + 1`.execute(trx)
  const today = later?.day ?? clock!.today
  await sql`select set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true), set_config('jit', 'off', true)`.execute(trx)
  await sealed.refresh(trx, today)
  // Once the day has turned, the sessions' rows take up the hours before it (migration
  // 2026-12-06T1600): a fold a day does it, the others find it done.
  await sql`select tracewell_settle_session_figures(${today}::date::timestamp at time zone 'UTC')`.execute(trx)
  // And the users and sessions by group build the days settled since (migration 2026-12-07T0100).
  await sql`select tracewell_settle_group_member_days()`.execute(trx)

  // The traces' rows as they are, merged with their deltas here: one place (mergeTraceDelta)
  // decides how a trace's summary grows, and the rows are written with their final values.
  const stored = await storedSummaries(trx, [...traces.values()], sealed)
  /** Every trace's summary as the fold writes it: its stored row merged with its deltas, or its deltas alone. */
  const rows: TraceDelta[] = []
  /** Those of traces with a stored row, written by the statement; the others may go by COPY. */
  const rewritten = new Set<TraceDelta>()
  /** Stored rows of an earlier day, which move to today's partition. */
  const moved: Array<{ project_id: string; trace_id: string; fold_day: string }> = []
  /** Stored traces whose dimensions changed: their scores' and judgments' rows take the new ones (keepTraceDimensionCopies). */
  const redimensioned: Array<{ project_id: string; trace_id: string }> = []
  for (const [key, delta] of traces) {
    const before = stored.get(key)
    if (before === undefined) {
      rows.push(delta)
      words.bind(delta, key)
      usage.countTrace(delta, 1)
      continue
    }
    const { fold_day: day, ...summary } = before
    if (day !== today) moved.push({ project_id: summary.project_id, trace_id: summary.trace_id, fold_day: day })
    const after = { ...summary }
    mergeTraceDelta(after, delta)
    rows.push(after)
    words.bind(after, key)
    rewritten.add(after)
    // A trace whose start moved to another block takes all of its words there.
    if (textBlockOf(Date.parse(after.start_time)) !== textBlockOf(Date.parse(summary.start_time))) words.forget(key)
    // What the trace counted in before is taken back, what it counts in now is added; the two
    // cancel out for a trace whose start and values did not change.
    usage.countTrace(summary, -1)
    usage.countTrace(after, 1)
    if (dimensionsChanged(summary, after)) redimensioned.push({ project_id: after.project_id, trace_id: after.trace_id })
  }
  await words.readMissing(trx, rows)

  const upserted = await copyNewSummaries(client, rows, rewritten, words, today)
  // The word filter is merged by the database, which holds the stored one.
  // The sets as Postgres array literals: json_to_recordset builds a text[] from a JSON array
  // element by element, which was half of its time on the rows of 10,000 one-span traces
  // (180–250 ms); array_in reads a literal in a fraction of that (docs/benchmarks.md).
  const summaryRows = upserted.map((row) => ({
    ...row,
    models: textArrayLiteral(row.models),
    response_models: textArrayLiteral(row.response_models),
    vendors: textArrayLiteral(row.vendors),
    services: textArrayLiteral(row.services),
    prompts: textArrayLiteral(row.prompts ?? []),
    tags: textArrayLiteral(row.tags ?? []),
    words: undefined,
    text_filter: words.of(row).toHex(),
  }))
  // In key order, so that two transactions writing the same rows (a fold and the janitor) lock them in one order.
  summaryRows.sort((a, b) => (a.project_id === b.project_id ? (a.trace_id < b.trace_id ? -1 : 1) : a.project_id < b.project_id ? -1 : 1))
  // A moved row leaves its day with its word filter, which the row written today takes up.
  await sql`
    with moved as (
      delete from trace_summaries s
      using json_to_recordset(${JSON.stringify(moved)}::json) as m(project_id text, trace_id text, fold_day date)
      where s.project_id = m.project_id and s.trace_id = m.trace_id and s.fold_day = m.fold_day
      returning s.project_id, s.trace_id, s.text_filter
    ),
    summaries as (
      insert into trace_summaries as s (project_id, trace_id, name, has_root, service_name, start_time, end_time, duration_us,
        span_count, error_count, models, response_models, vendors, services, input_tokens, output_tokens, total_tokens, cost_usd, tokens_estimated,
        session_id, user_id, text_filter, fold_day, words_in_blocks, prompts, tags)
      select b.project_id, b.trace_id, name, has_root, service_name, start_time, end_time,
        (extract(epoch from end_time - start_time) * 1000000)::bigint,
        span_count, error_count, models, coalesce(response_models, '{}'), vendors, services, input_tokens, output_tokens, total_tokens, cost_usd,
        coalesce(tokens_estimated, false), session_id, user_id,
        tracewell_text_filter_union(moved.text_filter, ('x' || b.text_filter)::varbit), ${today}::date, true,
        coalesce(prompts, '{}'), coalesce(tags, '{}')
      from json_to_recordset(${toStorableJson(JSON.stringify(summaryRows))}::json) as b(project_id text, trace_id text, name text,
        has_root boolean, service_name text, start_time timestamptz, end_time timestamptz, span_count integer, error_count integer,
        models text[], response_models text[], vendors text[], services text[], input_tokens bigint, output_tokens bigint, total_tokens bigint,
        cost_usd numeric, tokens_estimated boolean, session_id text, user_id text, text_filter text, prompts text[], tags text[])
      left join moved on moved.project_id = b.project_id and moved.trace_id = b.trace_id
      on conflict (project_id, trace_id, fold_day) do update set
        name = excluded.name, has_root = excluded.has_root, service_name = excluded.service_name,
        start_time = excluded.start_time, end_time = excluded.end_time, duration_us = excluded.duration_us,
        span_count = excluded.span_count, error_count = excluded.error_count,
        models = excluded.models, response_models = excluded.response_models, vendors = excluded.vendors, services = excluded.services,
        input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, total_tokens = excluded.total_tokens,
        cost_usd = excluded.cost_usd, tokens_estimated = excluded.tokens_estimated, session_id = excluded.session_id, user_id = excluded.user_id,
        prompts = excluded.prompts, tags = excluded.tags,
        text_filter = tracewell_text_filter_union(s.text_filter, excluded.text_filter)
    )
    insert into usage_rollups as u (project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency, error_traces, durations, hours)
    select project_id, dimension, hour, value, traces, spans, errors, input_tokens, output_tokens, cost_usd, latency, error_traces, coalesce(durations::integer[], '{}'), hours
    from json_to_recordset(${JSON.stringify(usage.rollupRows())}::json) as r(project_id text, dimension text, hour timestamptz,
      value text, traces integer, spans integer, errors integer, input_tokens bigint, output_tokens bigint, cost_usd numeric, latency integer[],
      error_traces integer, durations text, hours integer[])
    on conflict (project_id, dimension, hour, value) do update set
      hours = case when excluded.hours is null then u.hours when u.hours is null then excluded.hours
        else array(select x + y from unnest(u.hours, excluded.hours) as h(x, y)) end,
      traces = u.traces + excluded.traces,
      error_traces = u.error_traces + excluded.error_traces,
      durations = tracewell_histogram_add(u.durations, excluded.durations, 1),
      spans = u.spans + excluded.spans,
      errors = u.errors + excluded.errors,
      input_tokens = case when u.input_tokens is null then excluded.input_tokens when excluded.input_tokens is null then u.input_tokens else u.input_tokens + excluded.input_tokens end,
      output_tokens = case when u.output_tokens is null then excluded.output_tokens when excluded.output_tokens is null then u.output_tokens else u.output_tokens + excluded.output_tokens end,
      cost_usd = case when u.cost_usd is null then excluded.cost_usd when excluded.cost_usd is null then u.cost_usd else u.cost_usd + excluded.cost_usd end,
      latency = array(select x + y from unnest(u.latency, excluded.latency) as l(x, y))`.execute(trx)

  await addWordsToTextBlocks(trx, words.byBlock(rows))
  await keepTraceDimensionCopies(trx, today, redimensioned)

  const sessions = new Map<string, { project_id: string; session_id: string }>()
  for (const row of rows) if (row.session_id !== null) sessions.set(`${row.project_id}\u0000${row.session_id}`, { project_id: row.project_id, session_id: row.session_id })
  await recomputeSessions(trx, [...sessions.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, session]) => session), {
    today,
    traceDays: (session) => sealed.sessionTraceDays(session.project_id, session.session_id),
    sessionDays: (session) => sealed.sessionDays(session.project_id, session.session_id),
  })
  return { deltas: claimed.length, traces: traces.size }
}

/**
 * Writes by COPY (summary-copy.ts) the summaries of the traces that had no stored row, on
 * Postgres; answers the rows left for the fold's upsert: those of traces with a stored row, any
 * that the COPY leaves to the statement (SummaryCopyEncoder.add), and every row on PGlite (no client).
 */
async function copyNewSummaries(
  client: pg.PoolClient | undefined,
  rows: readonly TraceDelta[],
  rewritten: ReadonlySet<TraceDelta>,
  words: TraceWords,
  today: string,
): Promise<TraceDelta[]> {
  if (client === undefined) return [...rows]
  const encoder = new SummaryCopyEncoder(today)
  const upserted: TraceDelta[] = []
  for (const row of rows) if (rewritten.has(row) || !encoder.add(row, words.of(row).toBytes())) upserted.push(row)
  if (encoder.rows > 0) await copyData(client, summaryCopyStatement, encoder.finish())
  return upserted
}

/** The sealed days' filters, one set per database (per pool), kept for the life of the process. */
const sealedDays = new WeakMap<Db, SealedSummaryDays>()

function sealedDaysOf(db: Db): SealedSummaryDays {
  let days = sealedDays.get(db)
  if (days === undefined) sealedDays.set(db, (days = new SealedSummaryDays()))
  return days
}

/**
 * The stored summaries of the given traces (those that have one), as deltas of their whole
 * history with the day of their row, keyed as the fold keys them. Each looked up by primary key in
 * the days `sealed` names for it, one partition a lookup, whatever the planner believes of the
 * tables' sizes.
 */
async function storedSummaries(db: Executor, traces: readonly TraceDelta[], sealed: SealedSummaryDays): Promise<Map<string, TraceDelta & { fold_day: string }>> {
  /** By day, the keys to look up in its partition: every trace in today's, a few in sealed days'. */
  const byDay = new Map<string, { projects: string[]; ids: string[] }>()
  for (const trace of traces) {
    for (const day of sealed.traceDays(trace.project_id, trace.trace_id)) {
      let keys = byDay.get(day)
      if (keys === undefined) byDay.set(day, (keys = { projects: [], ids: [] }))
      keys.projects.push(trace.project_id)
      keys.ids.push(trace.trace_id)
    }
  }
  if (byDay.size === 0) return new Map()
  // The keys as array literals: node-postgres serialises a JavaScript array element by element,
  // which for the 20,000 keys of 10,000 new traces was a tenth of the fold's own CPU. Each day a
  // parameter of its own, not a column of the keys: the planner then prunes to its partition once,
  // where a day read from each key was pruned again at every key (with yesterday's probe, twice
  // the backend's CPU a new trace: docs/benchmarks.md, "A new trace looked up in today's partition").
  const lookups = [...byDay].map(([day, keys]) => sql`
    select s.project_id, s.trace_id, s.name, s.has_root, s.service_name,
      to_char(s.start_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as start_time,
      to_char(s.end_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as end_time,
      s.span_count, s.error_count, s.models, s.response_models, s.vendors, s.services, s.input_tokens, s.output_tokens, s.total_tokens,
      s.cost_usd::text as cost_usd, s.tokens_estimated, s.session_id, s.user_id, s.prompts, s.tags, s.fold_day::text as fold_day
    from unnest(${textArrayLiteral(keys.projects)}::text[], ${textArrayLiteral(keys.ids)}::text[]) as k(project_id, trace_id)
    join lateral (select * from trace_summaries s where s.project_id = k.project_id and s.trace_id = k.trace_id and s.fold_day = ${day}::date offset 0) as s on true`)
  const { rows } = await sql<Omit<TraceDelta, 'input_tokens' | 'output_tokens' | 'total_tokens'> & { input_tokens: string | null; output_tokens: string | null; total_tokens: string | null; fold_day: string }>`${sql.join(lookups, sql` union all `)}`.execute(db)
  return new Map(
    rows.map((row) => [
      `${row.project_id}\u0000${row.trace_id}`,
      { ...row, input_tokens: countOrNull(row.input_tokens), output_tokens: countOrNull(row.output_tokens), total_tokens: countOrNull(row.total_tokens) },
    ]),
  )
}

/** A bigint column read as text: its number, or null (unknown). */
const countOrNull = (text: string | null): number | null => (text === null ? null : Number(text))

/**
 * The words of the traces a fold writes: those their deltas carried, or, for a trace whose delta
 * came without them (a writer of an earlier version) or whose start moved to another block, all of
 * its words, read again from its spans.
 */
class TraceWords {
  /** Null: to be read from the trace's spans. */
  readonly #words = new Map<string, TextFilterWords | null>()
  /**
   * The key of each summary row the fold writes (bind): a row's words are asked for two or three
   * times, and building its key again each time (a string joined, then hashed) was a twentieth of
   * the fold's thread on one-span traces; a row is found by itself.
   */
  readonly #keys = new Map<TraceDelta, string>()

  add(key: string, delta: TraceDelta): void {
    if (delta.words === undefined) {
      this.#words.set(key, null)
      return
    }
    let into = this.#words.get(key)
    if (into === null) return
    if (into === undefined) this.#words.set(key, (into = new TextFilterWords()))
    if (delta.words !== null) into.addHashes(TextFilterWords.hashesOfBase64(delta.words))
  }

  /** Says which trace a summary row is of. */
  bind(row: TraceDelta, key: string): void {
    this.#keys.set(row, key)
  }

  /** Marks a trace's words to be read from its spans. */
  forget(key: string): void {
    this.#words.set(key, null)
  }

  /** Reads the words of the marked traces among `rows` (their summaries as the fold writes them). */
  async readMissing(db: Executor, rows: readonly TraceDelta[]): Promise<void> {
    const missing = rows.filter((row) => this.#words.get(this.#keyOf(row)) === null)
    for (const [key, words] of await wordsOfStoredTraces(db, missing)) this.#words.set(key, words)
  }

  of(row: TraceDelta): TextFilterWords {
    return this.#words.get(this.#keyOf(row)) ?? new TextFilterWords()
  }

  #keyOf(row: TraceDelta): string {
    return this.#keys.get(row) ?? keyOf(row)
  }

  /** The words of `rows` gathered by the block of each trace's start. */
  byBlock(rows: readonly TraceDelta[]): TextBlockWords[] {
    return wordsByBlock(rows.map((row) => ({ projectId: row.project_id, startMs: Date.parse(row.start_time), words: this.of(row) })))
  }
}

/** Whether a trace's dimensions its scores' rows copy (score_dimensions) differ, arrays in order (as stored). */
function dimensionsChanged(before: TraceDelta, after: TraceDelta): boolean {
  const sameArray = (a: readonly string[] | null | undefined, b: readonly string[] | null | undefined) =>
    (a ?? []).length === (b ?? []).length && (a ?? []).every((value, i) => value === (b ?? [])[i])
  return before.service_name !== after.service_name || before.user_id !== after.user_id || before.session_id !== after.session_id
    || !sameArray(before.models, after.models) || !sameArray(before.response_models, after.response_models) || !sameArray(before.vendors, after.vendors)
    || !sameArray(before.services, after.services) || !sameArray(before.prompts, after.prompts) || !sameArray(before.tags, after.tags)
}

const keyOf = (trace: Pick<TraceDelta, 'project_id' | 'trace_id'>): string => `${trace.project_id}\u0000${trace.trace_id}`
