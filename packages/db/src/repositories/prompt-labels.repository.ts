import { sql } from 'kysely'
import type { PromptLabel, PromptLabelMove } from '../database.ts'
import { inTransaction, type Executor } from './executor.ts'

/** The label GET /api/promptset serves when asked for neither a version nor a label: what "live" meant. */
export const productionLabel = 'production'

export interface PromptLabelDto {
  name: string
  version: number
  /** When the label last moved. */
  updatedAt: string
}

function toPromptLabelDto(row: PromptLabel): PromptLabelDto {
  return { name: row.name, version: row.version, updatedAt: row.updated_at.toISOString() }
}

/** One move of a label; a null version is "absent" (the label was created, or removed). */
export interface LabelMoveDto {
  id: string
  label: string
  fromVersion: number | null
  toVersion: number | null
  movedAt: string
  /** The API key that moved it; null for a move made by a person or outside the API. */
  movedByKeyId: string | null
  movedByKeyPrefix: string | null
  /** The signed-in person who moved it, by name; null when a key did. */
  movedByUser: { id: string; name: string } | null
}

function toLabelMoveDto(row: PromptLabelMove & { mover_name: string | null }): LabelMoveDto {
  return {
    id: row.id,
    label: row.label,
    fromVersion: row.from_version,
    toVersion: row.to_version,
    movedAt: row.moved_at.toISOString(),
    movedByKeyId: row.moved_by_key_id,
    movedByKeyPrefix: row.moved_by_key_prefix,
    movedByUser: row.moved_by_user_id === null || row.mover_name === null ? null : { id: row.moved_by_user_id, name: row.mover_name },
  }
}

/** Who makes a move: a signed-in person, or an API key (its display prefix is recorded beside its id). */
export type LabelMover = { userId: string; keyId?: undefined } | { keyId: string; userId?: undefined }

export interface LabelMoveRequest {
  promptsetId: string
  label: string
  /** The version to point the label at; null removes the label. */
  version: number | null
  /** When given, the move happens only if the label points at this version now (null: it is absent). */
  expectedVersion?: number | null | undefined
  movedBy: LabelMover | null
}

export type LabelMoveResult =
  | { kind: 'moved'; label: PromptLabelDto | null; previousVersion: number | null }
  | { kind: 'unchanged'; label: PromptLabelDto | null }
  | { kind: 'version-not-found' }
  | { kind: 'conflict'; currentVersion: number | null }

/**
 * Points a label at a version (or removes it) and records the move. The promptset's row is held
 * for the transaction, as a version create holds it: moves of one promptset are serialised, so of
 * two concurrent moves one is applied after the other, and each history row's `from_version` is
 * the version the label really left. The primary key (promptset, name) is what guarantees that a
 * label never points at two versions, whatever path writes it.
 */
export async function moveLabel(db: Executor, move: LabelMoveRequest): Promise<LabelMoveResult> {
  const { promptsetId, label, version } = move
  return inTransaction(db, async (trx) => {
    await trx.selectFrom('promptsets').select('id').where('id', '=', promptsetId).forUpdate().executeTakeFirstOrThrow()
    if (version !== null) {
      const target = await trx.selectFrom('prompts').select('id').where('promptset_id', '=', promptsetId).where('version', '=', version).executeTakeFirst()
      if (!target) return { kind: 'version-not-found' }
    }
    const current = await trx.selectFrom('prompt_labels').selectAll().where('promptset_id', '=', promptsetId).where('name', '=', label).executeTakeFirst()
    const currentVersion = current?.version ?? null
    if (move.expectedVersion !== undefined && move.expectedVersion !== currentVersion) return { kind: 'conflict', currentVersion }
    if (version === currentVersion) return { kind: 'unchanged', label: current ? toPromptLabelDto(current) : null }

    let moved: PromptLabelDto | null = null
    if (version === null) {
      await trx.deleteFrom('prompt_labels').where('promptset_id', '=', promptsetId).where('name', '=', label).execute()
    } else {
      const row = await trx
        .insertInto('prompt_labels')
        .values({ promptset_id: promptsetId, name: label, version, updated_at: sql`clock_timestamp()` })
        .onConflict((conflict) =>
          conflict.columns(['promptset_id', 'name']).doUpdateSet((eb) => ({ version: eb.ref('excluded.version'), updated_at: eb.ref('excluded.updated_at') })),
        )
        .returningAll()
        .executeTakeFirstOrThrow()
      moved = toPromptLabelDto(row)
    }
    const { movedBy } = move
    await trx
      .insertInto('prompt_label_moves')
      .values((eb) => ({
        promptset_id: promptsetId,
        label,
        from_version: currentVersion,
        to_version: version,
        moved_by_key_id: movedBy?.keyId ?? null,
        moved_by_key_prefix: movedBy?.keyId === undefined ? null : eb.selectFrom('api_keys').select('prefix').where('id', '=', movedBy.keyId),
        moved_by_user_id: movedBy?.userId ?? null,
      }))
      .execute()
    await trx.updateTable('promptsets').set({ updated_at: sql`now()` }).where('id', '=', promptsetId).execute()
    return { kind: 'moved', label: moved, previousVersion: currentVersion }
  })
}

/** A promptset's labels, by name. */
export async function listPromptLabels(db: Executor, promptsetId: string): Promise<PromptLabelDto[]> {
  const rows = await db.selectFrom('prompt_labels').selectAll().where('promptset_id', '=', promptsetId).orderBy('name').execute()
  return rows.map(toPromptLabelDto)
}

export interface LabelMoveQuery {
  promptsetId: string
  /** Only this label's moves. */
  label?: string | undefined
  /** Moves made at or after `from` and before `to`. */
  from?: Date | undefined
  to?: Date | undefined
  limit: number
  /** The `next` of the previous page: moves older than it. */
  before?: string | undefined
}

export interface LabelMovePage {
  moves: LabelMoveDto[]
  next: string | null
}

/** A promptset's label moves, newest first, a page at a time. */
export async function listLabelMoves(db: Executor, query: LabelMoveQuery): Promise<LabelMovePage> {
  let select = db
    .selectFrom('prompt_label_moves')
    .leftJoin('users', 'users.id', 'prompt_label_moves.moved_by_user_id')
    .selectAll('prompt_label_moves')
    .select('users.name as mover_name')
    .where('prompt_label_moves.promptset_id', '=', query.promptsetId)
  if (query.label !== undefined) select = select.where('prompt_label_moves.label', '=', query.label)
  if (query.before !== undefined) select = select.where('prompt_label_moves.id', '<', query.before)
  if (query.from !== undefined) select = select.where('prompt_label_moves.moved_at', '>=', query.from)
  if (query.to !== undefined) select = select.where('prompt_label_moves.moved_at', '<', query.to)
  const rows = await select.orderBy('prompt_label_moves.id', 'desc').limit(query.limit + 1).execute()
  const page = rows.slice(0, query.limit)
  return { moves: page.map(toLabelMoveDto), next: rows.length > query.limit ? (page.at(-1)?.id ?? null) : null }
}
