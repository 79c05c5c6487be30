import type { ScoreDataType, ScoreSource } from '../database.ts'
import type { Executor } from './executor.ts'
import { findScoreConfig } from './score-configs.repository.ts'
import { scoreValue } from './score-value.ts'
import { upsertScore, type ScoreDto } from './scores.repository.ts'

export interface ScoreInput {
  projectId: string
  id: string
  traceId: string | null
  spanId: string | null
  sessionId: string | null
  name: string
  value: number | boolean | string
  dataType?: ScoreDataType | undefined
  comment: string | null
  source: ScoreSource
  author: string | null
  evaluatorId?: string | null | undefined
}

/** Checks a score against its name's configuration (a ScoreValueError when it does not fit) and upserts it. */
export async function recordScore(db: Executor, input: ScoreInput, where = 'body/value'): Promise<{ score: ScoreDto; created: boolean }> {
  const config = await findScoreConfig(db, input.projectId, input.name)
  const value = scoreValue(input.value, input.dataType, config, where)
  return upsertScore(db, {
    projectId: input.projectId,
    id: input.id,
    traceId: input.traceId,
    spanId: input.spanId,
    sessionId: input.sessionId,
    name: input.name,
    dataType: value.dataType,
    numericValue: value.numericValue,
    stringValue: value.stringValue,
    comment: input.comment,
    source: input.source,
    author: input.author,
    configId: value.configId,
    evaluatorId: input.evaluatorId ?? null,
  })
}
