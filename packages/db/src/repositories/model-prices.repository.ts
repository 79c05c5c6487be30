import type { ModelMatch, ProjectModelPrice } from '../database.ts'
import type { Executor } from './executor.ts'

/** A project's own price for a model, in USD per million tokens (null: priced as its parent kind). */
export interface ModelPriceDto {
  id: string
  projectId: string
  model: string
  match: ModelMatch
  usdPerMillionTokens: {
    input: number
    output: number
    cacheRead: number | null
    cacheWrite: number | null
    reasoning: number | null
  }
  effectiveFrom: string | null
  createdAt: string
}

export interface NewModelPrice {
  projectId: string
  model: string
  match: ModelMatch
  usdPerMillionTokens: { input: number; output: number; cacheRead?: number | null; cacheWrite?: number | null; reasoning?: number | null }
  effectiveFrom: Date | null
}

const nullableNumber = (value: string | null): number | null => (value === null ? null : Number(value))

function toModelPriceDto(row: ProjectModelPrice): ModelPriceDto {
  return {
    id: row.id,
    projectId: row.project_id,
    model: row.model,
    match: row.match,
    usdPerMillionTokens: {
      input: Number(row.input_usd_per_mtok),
      output: Number(row.output_usd_per_mtok),
      cacheRead: nullableNumber(row.cache_read_usd_per_mtok),
      cacheWrite: nullableNumber(row.cache_write_usd_per_mtok),
      reasoning: nullableNumber(row.reasoning_usd_per_mtok),
    },
    effectiveFrom: row.effective_from?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  }
}

/** Postgres's unique_violation for project_model_prices_unique: the same model, match and date. */
export const MODEL_PRICE_EXISTS = 'project_model_prices_unique'

export async function createModelPrice(db: Executor, price: NewModelPrice): Promise<ModelPriceDto> {
  const rates = price.usdPerMillionTokens
  const row = await db
    .insertInto('project_model_prices')
    .values({
      project_id: price.projectId,
      model: price.model,
      match: price.match,
      input_usd_per_mtok: rates.input,
      output_usd_per_mtok: rates.output,
      cache_read_usd_per_mtok: rates.cacheRead ?? null,
      cache_write_usd_per_mtok: rates.cacheWrite ?? null,
      reasoning_usd_per_mtok: rates.reasoning ?? null,
      effective_from: price.effectiveFrom,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toModelPriceDto(row)
}

/**
 * Replaces a price's fields in place (its id and creation time stay, so its rank among the
 * project's prices does too); undefined when the project has no such price.
 */
export async function updateModelPrice(db: Executor, priceId: string, price: NewModelPrice): Promise<ModelPriceDto | undefined> {
  const rates = price.usdPerMillionTokens
  const row = await db
    .updateTable('project_model_prices')
    .set({
      model: price.model,
      match: price.match,
      input_usd_per_mtok: rates.input,
      output_usd_per_mtok: rates.output,
      cache_read_usd_per_mtok: rates.cacheRead ?? null,
      cache_write_usd_per_mtok: rates.cacheWrite ?? null,
      reasoning_usd_per_mtok: rates.reasoning ?? null,
      effective_from: price.effectiveFrom,
    })
    .where('project_id', '=', price.projectId)
    .where('id', '=', priceId)
    .returningAll()
    .executeTakeFirst()
  return row === undefined ? undefined : toModelPriceDto(row)
}

/** A project's prices, newest first (the order CustomPriceBook breaks ties in). */
export async function listModelPrices(db: Executor, projectId: string): Promise<ModelPriceDto[]> {
  const rows = await db
    .selectFrom('project_model_prices')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute()
  return rows.map(toModelPriceDto)
}

/** Whether the price existed in that project (and is now gone). */
export async function deleteModelPrice(db: Executor, projectId: string, priceId: string): Promise<boolean> {
  const result = await db.deleteFrom('project_model_prices').where('project_id', '=', projectId).where('id', '=', priceId).executeTakeFirst()
  return result.numDeletedRows > 0n
}
