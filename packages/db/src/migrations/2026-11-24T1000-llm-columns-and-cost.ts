import { sql, type Kysely } from 'kysely'
import type { Attributes } from './frozen/llm-usage-2026-11-24/attribute-values.ts'
import { deriveLlmUsage } from './frozen/llm-usage-2026-11-24/derive-llm-fields.ts'
import { callerSpanCost, priceCall } from './frozen/llm-usage-2026-11-24/price-call.ts'

// The LLM columns of every instrumentation library (vendor and models from OpenInference and the
// Vercel AI SDK, cache and reasoning tokens, session, user), the cost of each call, and projects'
// own model prices; then the columns of spans stored before, filled in.
//
// Not run in one transaction (migrator.ts reads `transactional`): adding the columns takes an
// ACCESS EXCLUSIVE lock on spans, which a transaction would hold until the backfill of the whole
// table had committed, stopping every writer meanwhile. Here the DDL commits at once (adding
// nullable columns without a default rewrites nothing), then each batch of the backfill is one
// statement of its own, locking only its own rows while it runs. Kysely records the migration
// only once up() has returned, so a migration stopped half way is run again from the start:
// every step is idempotent.
//
// The backfill derives the columns with a frozen copy of @tracewell/llm-usage as it was when this
// migration was written, and the price data of @pydantic/genai-prices 0.1.8 pinned under an alias
// (frozen/README.md): a later version of either never changes what a rerun computes.

/** Read by migrator.ts: run without a wrapping transaction (see above). */
export const transactional = false

/** Spans read and written per backfill statement: a few MB of attributes, a short row lock. */
export const BACKFILL_BATCH_SIZE = 2_000

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`
      alter table spans
        add column if not exists llm_response_model text,
        add column if not exists cached_input_tokens bigint,
        add column if not exists cache_write_input_tokens bigint,
        add column if not exists reasoning_tokens bigint,
        add column if not exists session_id text,
        add column if not exists user_id text,
        add column if not exists input_cost_usd numeric,
        add column if not exists output_cost_usd numeric,
        add column if not exists total_cost_usd numeric,
        add column if not exists cost_source text`.execute(trx)
    // USD per million tokens, as price lists quote them. A price without a date applies to every
    // span; the same model, match and date twice is a mistake the API reports (409).
    await sql`
      create table if not exists project_model_prices (
        id text primary key default gen_random_uuid()::text,
        project_id text not null references projects(id) on delete cascade,
        model text not null,
        match text not null check (match in ('exact', 'glob')),
        input_usd_per_mtok numeric not null check (input_usd_per_mtok >= 0),
        output_usd_per_mtok numeric not null check (output_usd_per_mtok >= 0),
        cache_read_usd_per_mtok numeric check (cache_read_usd_per_mtok >= 0),
        cache_write_usd_per_mtok numeric check (cache_write_usd_per_mtok >= 0),
        reasoning_usd_per_mtok numeric check (reasoning_usd_per_mtok >= 0),
        effective_from timestamptz,
        created_at timestamptz not null default now(),
        constraint project_model_prices_unique unique nulls not distinct (project_id, model, match, effective_from)
      )`.execute(trx)
  })
  await backfillSpans(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('project_model_prices').ifExists().execute()
  await sql`
    alter table spans
      drop column if exists llm_response_model, drop column if exists cached_input_tokens,
      drop column if exists cache_write_input_tokens, drop column if exists reasoning_tokens,
      drop column if exists session_id, drop column if exists user_id, drop column if exists input_cost_usd,
      drop column if exists output_cost_usd, drop column if exists total_cost_usd, drop column if exists cost_source`.execute(db)
}

interface StoredSpan {
  project_id: string
  trace_id: string
  span_id: string
  start_time: Date
  attributes: Attributes
  llm_vendor: string | null
  llm_model: string | null
  llm_request_type: string | null
  input_tokens: string | null
  output_tokens: string | null
  total_tokens: string | null
}

/** The columns a backfilled row gets, snake_case as jsonb_to_recordset reads them. */
const UPDATED_COLUMNS = [
  ['llm_vendor', 'text'], ['llm_model', 'text'], ['llm_request_type', 'text'], ['input_tokens', 'bigint'],
  ['output_tokens', 'bigint'], ['total_tokens', 'bigint'], ['llm_response_model', 'text'], ['cached_input_tokens', 'bigint'],
  ['cache_write_input_tokens', 'bigint'], ['reasoning_tokens', 'bigint'], ['session_id', 'text'], ['user_id', 'text'],
  ['input_cost_usd', 'numeric'], ['output_cost_usd', 'numeric'], ['total_cost_usd', 'numeric'], ['cost_source', 'text'],
] as const
type UpdatedRow = Record<(typeof UPDATED_COLUMNS)[number][0] | 'project_id' | 'trace_id' | 'span_id', string | number | null>

/**
 * Walks spans in primary-key order, BACKFILL_BATCH_SIZE rows a statement, and rewrites the derived
 * LLM columns of the rows the table says something about (a span with no LLM attribute is left
 * alone, so the table is not rewritten for nothing). The columns that existed before are
 * re-derived too: the table now reads OpenInference and Vercel AI SDK spans they were null for.
 */
async function backfillSpans(db: Kysely<unknown>): Promise<void> {
  let after: { project_id: string; trace_id: string; span_id: string } | undefined
  for (;;) {
    const position = after === undefined ? sql`true` : sql`(project_id, trace_id, span_id) > (${after.project_id}, ${after.trace_id}, ${after.span_id})`
    const { rows } = await sql<StoredSpan>`
      select project_id, trace_id, span_id, start_time, attributes, llm_vendor, llm_model, llm_request_type,
             input_tokens, output_tokens, total_tokens
      from spans where ${position}
      order by project_id, trace_id, span_id
      limit ${BACKFILL_BATCH_SIZE}`.execute(db)
    const updates = rows.map(backfilledRow).filter((row): row is UpdatedRow => row !== null)
    if (updates.length > 0) {
      const shape = sql.raw(['project_id text', 'trace_id text', 'span_id text', ...UPDATED_COLUMNS.map(([name, type]) => `${name} ${type}`)].join(', '))
      const assignments = sql.raw(UPDATED_COLUMNS.map(([name]) => `${name} = u.${name}`).join(', '))
      await sql`
        update spans as s set ${assignments}
        from jsonb_to_recordset(${JSON.stringify(updates)}::jsonb) as u(${shape})
        where s.project_id = u.project_id and s.trace_id = u.trace_id and s.span_id = u.span_id`.execute(db)
    }
    const last = rows.at(-1)
    if (last === undefined || rows.length < BACKFILL_BATCH_SIZE) return
    after = last
  }
}

const count = (value: string | null): number | null => (value === null ? null : Number(value))

/** The row's new column values, or null when the table finds nothing new to say about it. */
function backfilledRow(row: StoredSpan): UpdatedRow | null {
  const { fields, callerCost } = deriveLlmUsage(row.attributes)
  const caller = callerSpanCost(callerCost)
  // Only the price table: no project has prices of its own yet, the table was made above.
  const cost = caller.costSource !== null ? caller : priceCall(fields, row.start_time).cost
  const unchanged =
    fields.llmVendor === row.llm_vendor && fields.llmModel === row.llm_model && fields.llmRequestType === row.llm_request_type &&
    fields.inputTokens === count(row.input_tokens) && fields.outputTokens === count(row.output_tokens) &&
    fields.totalTokens === count(row.total_tokens) && fields.llmResponseModel === null && fields.cachedInputTokens === null &&
    fields.cacheWriteInputTokens === null && fields.reasoningTokens === null && fields.sessionId === null && fields.userId === null &&
    cost.costSource === null
  if (unchanged) return null
  return {
    project_id: row.project_id, trace_id: row.trace_id, span_id: row.span_id,
    llm_vendor: fields.llmVendor, llm_model: fields.llmModel, llm_request_type: fields.llmRequestType,
    input_tokens: fields.inputTokens, output_tokens: fields.outputTokens, total_tokens: fields.totalTokens,
    llm_response_model: fields.llmResponseModel, cached_input_tokens: fields.cachedInputTokens,
    cache_write_input_tokens: fields.cacheWriteInputTokens, reasoning_tokens: fields.reasoningTokens,
    session_id: fields.sessionId, user_id: fields.userId,
    input_cost_usd: cost.inputCostUsd, output_cost_usd: cost.outputCostUsd, total_cost_usd: cost.totalCostUsd, cost_source: cost.costSource,
  }
}
