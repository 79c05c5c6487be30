import { sql } from 'kysely'
import type { Prompt } from '../database.ts'
import { inTransaction, type Executor } from './executor.ts'
import { moveLabel, productionLabel, type LabelMover } from './prompt-labels.repository.ts'

export interface PromptDto {
  id: string
  value: string
  variables: string[]
  model: string
  modelSettings: Record<string, unknown>
  version: number
  /** Whether the `production` label points at this version (what "live" has always meant). */
  live: boolean
  /** The labels pointing at this version, by name. */
  labels: string[]
  tags: string[]
  spanId: string | null
  note: string
  promptsetId: string
  createdAt: string
  updatedAt: string
}

type PromptRow = Prompt & { labels: string[] }

function toPromptDto(row: PromptRow): PromptDto {
  return {
    id: row.id,
    value: row.value,
    variables: row.variables,
    model: row.model,
    modelSettings: row.model_settings,
    version: row.version,
    // From the label, never from the `live` column: that column only mirrors the label for the
    // previous release and is dropped later (see the prompt-labels migration).
    live: row.labels.includes(productionLabel),
    labels: row.labels,
    tags: row.tags,
    spanId: row.span_id,
    note: row.note,
    promptsetId: row.promptset_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}

/** Prompts with the names of the labels pointing at each. */
function selectPrompts(db: Executor) {
  return db
    .selectFrom('prompts')
    .selectAll('prompts')
    .select(
      sql<string[]>`coalesce((
        select jsonb_agg(prompt_labels.name order by prompt_labels.name) from prompt_labels
        where prompt_labels.promptset_id = prompts.promptset_id and prompt_labels.version = prompts.version
      ), '[]'::jsonb)`.as('labels'),
    )
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
  /** Point `production` at the new version in the same transaction. */
  live: boolean
  /** Who is recorded as moving `production` when `live` is set. */
  movedBy?: LabelMover | null
}

/**
 * Adds the next version of a promptset's prompt. The promptset row is locked for the transaction,
 * so concurrent creates get distinct consecutive versions instead of racing on max(version)+1.
 */
export async function createPromptVersion(db: Executor, prompt: NewPromptVersion): Promise<PromptDto> {
  return inTransaction(db, async (trx) => {
    await trx.selectFrom('promptsets').select('id').where('id', '=', prompt.promptsetId).forUpdate().executeTakeFirstOrThrow()
    const { highest } = await trx
      .selectFrom('prompts')
      .select((eb) => eb.fn.max<number | null>('version').as('highest'))
      .where('promptset_id', '=', prompt.promptsetId)
      .executeTakeFirstOrThrow()
    const version = (highest ?? 0) + 1
    await trx
      .insertInto('prompts')
      .values({
        promptset_id: prompt.promptsetId,
        value: prompt.value,
        variables: JSON.stringify(prompt.variables),
        model: prompt.model,
        model_settings: JSON.stringify(prompt.modelSettings),
        version,
        tags: JSON.stringify(prompt.tags),
        span_id: prompt.spanId,
        note: prompt.note,
      })
      .execute()
    if (prompt.live) await moveLabel(trx, { promptsetId: prompt.promptsetId, label: productionLabel, version, movedBy: prompt.movedBy ?? null })
    await trx.updateTable('promptsets').set({ updated_at: sql`now()` }).where('id', '=', prompt.promptsetId).execute()
    return (await findPromptVersion(trx, prompt.promptsetId, version)) as PromptDto
  })
}

export async function findPromptVersion(db: Executor, promptsetId: string, version: number): Promise<PromptDto | undefined> {
  const row = await selectPrompts(db).where('prompts.promptset_id', '=', promptsetId).where('prompts.version', '=', version).executeTakeFirst()
  return row && toPromptDto(row)
}

/** The version a label points at. */
export async function findLabelledPrompt(db: Executor, promptsetId: string, label: string): Promise<PromptDto | undefined> {
  const row = await selectPrompts(db)
    .innerJoin('prompt_labels as target', (join) => join.onRef('target.promptset_id', '=', 'prompts.promptset_id').onRef('target.version', '=', 'prompts.version'))
    .where('target.promptset_id', '=', promptsetId)
    .where('target.name', '=', label)
    .executeTakeFirst()
  return row && toPromptDto(row)
}

/**
 * The version a label points at in the project's promptset of this name (the oldest promptset,
 * should two share a name): what an evaluator's judge prompt is when it names one.
 */
export async function findPromptByPromptsetName(db: Executor, projectId: string, promptsetName: string, label: string): Promise<PromptDto | undefined> {
  const promptset = await db
    .selectFrom('promptsets')
    .select('id')
    .where('project_id', '=', projectId)
    .where('name', '=', promptsetName)
    .orderBy('created_at')
    .orderBy('id')
    .executeTakeFirst()
  return promptset === undefined ? undefined : findLabelledPrompt(db, promptset.id, label)
}

/** The version `production` points at. */
export function findLivePrompt(db: Executor, promptsetId: string): Promise<PromptDto | undefined> {
  return findLabelledPrompt(db, promptsetId, productionLabel)
}

export async function listPrompts(db: Executor, promptsetId: string): Promise<PromptDto[]> {
  const rows = await selectPrompts(db).where('prompts.promptset_id', '=', promptsetId).orderBy('prompts.version').execute()
  return rows.map(toPromptDto)
}

export type SetLiveResult = { kind: 'ok'; live: PromptDto | null } | { kind: 'version-not-found' }

/** Points `production` at a version (or removes it, for null): PUT /api/promptsets/:id/live. */
export async function setLiveVersion(db: Executor, promptsetId: string, version: number | null, movedBy: LabelMover | null = null): Promise<SetLiveResult> {
  return inTransaction(db, async (trx) => {
    const result = await moveLabel(trx, { promptsetId, label: productionLabel, version, movedBy })
    if (result.kind === 'version-not-found') return result
    return { kind: 'ok', live: version === null ? null : ((await findPromptVersion(trx, promptsetId, version)) as PromptDto) }
  })
}
