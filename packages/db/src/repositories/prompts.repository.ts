import { sql } from 'kysely'
import type { Db } from '../create-db.ts'
import type { Prompt } from '../database.ts'
import type { Executor } from './executor.ts'

export interface PromptDto {
  id: string
  value: string
  variables: string[]
  model: string
  modelSettings: Record<string, unknown>
  version: number
  live: boolean
  tags: string[]
  spanId: string | null
  note: string
  promptsetId: string
  createdAt: string
  updatedAt: string
}

export function toPromptDto(row: Prompt): PromptDto {
  return {
    id: row.id,
    value: row.value,
    variables: row.variables,
    model: row.model,
    modelSettings: row.model_settings,
    version: row.version,
    live: row.live,
    tags: row.tags,
    spanId: row.span_id,
    note: row.note,
    promptsetId: row.promptset_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

export interface NewPromptVersion {
  promptsetId: string
  value: string
  variables: string[]
  model: string
  modelSettings: Record<string, unknown>
  tags: string[]
  note: string
  spanId: string | null
  live: boolean
}

/**
 * Adds the next version of a registry's prompt. The registry row is locked for the transaction,
 * so concurrent creates get distinct consecutive versions instead of racing on max(version)+1.
 * A new live prompt takes the live flag from the previous one in the same transaction.
 */
export async function createPromptVersion(db: Db, prompt: NewPromptVersion): Promise<PromptDto> {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom('promptsets').select('id').where('id', '=', prompt.promptsetId).forUpdate().executeTakeFirstOrThrow()
    const { highest } = await trx
      .selectFrom('prompts')
      .select((eb) => eb.fn.max<number | null>('version').as('highest'))
      .where('promptset_id', '=', prompt.promptsetId)
      .executeTakeFirstOrThrow()
    if (prompt.live) await clearLive(trx, prompt.promptsetId)
    const row = await trx
      .insertInto('prompts')
      .values({
        promptset_id: prompt.promptsetId,
        value: prompt.value,
        variables: JSON.stringify(prompt.variables),
        model: prompt.model,
        model_settings: JSON.stringify(prompt.modelSettings),
        version: (highest ?? 0) + 1,
        live: prompt.live,
        tags: JSON.stringify(prompt.tags),
        span_id: prompt.spanId,
        note: prompt.note,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
    await touchPromptset(trx, prompt.promptsetId)
    return toPromptDto(row)
  })
}

async function clearLive(trx: Executor, promptsetId: string): Promise<void> {
  await trx.updateTable('prompts').set({ live: false, updated_at: sql`now()` }).where('promptset_id', '=', promptsetId).where('live', '=', true).execute()
}

async function touchPromptset(trx: Executor, promptsetId: string): Promise<void> {
  await trx.updateTable('promptsets').set({ updated_at: sql`now()` }).where('id', '=', promptsetId).execute()
}

export async function findPromptVersion(db: Executor, promptsetId: string, version: number): Promise<PromptDto | undefined> {
  const row = await db.selectFrom('prompts').selectAll().where('promptset_id', '=', promptsetId).where('version', '=', version).executeTakeFirst()
  return row && toPromptDto(row)
}

export async function findLivePrompt(db: Executor, promptsetId: string): Promise<PromptDto | undefined> {
  const row = await db.selectFrom('prompts').selectAll().where('promptset_id', '=', promptsetId).where('live', '=', true).executeTakeFirst()
  return row && toPromptDto(row)
}

export async function listPrompts(db: Executor, promptsetId: string): Promise<PromptDto[]> {
  const rows = await db.selectFrom('prompts').selectAll().where('promptset_id', '=', promptsetId).orderBy('version').execute()
  return rows.map(toPromptDto)
}

export type SetLiveResult = { kind: 'ok'; live: PromptDto | null } | { kind: 'version-not-found' }

/** Makes one version live (or none, for null), unsetting the previous one atomically. */
export async function setLiveVersion(db: Db, promptsetId: string, version: number | null): Promise<SetLiveResult> {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom('promptsets').select('id').where('id', '=', promptsetId).forUpdate().executeTakeFirstOrThrow()
    if (version !== null) {
      const target = await trx.selectFrom('prompts').select('id').where('promptset_id', '=', promptsetId).where('version', '=', version).executeTakeFirst()
      if (!target) return { kind: 'version-not-found' }
    }
    await clearLive(trx, promptsetId)
    await touchPromptset(trx, promptsetId)
    if (version === null) return { kind: 'ok', live: null }
    const row = await trx
      .updateTable('prompts')
      .set({ live: true, updated_at: sql`now()` })
      .where('promptset_id', '=', promptsetId)
      .where('version', '=', version)
      .returningAll()
      .executeTakeFirstOrThrow()
    return { kind: 'ok', live: toPromptDto(row) }
  })
}
