import { findScoreConfig, upsertScore, type Executor, type ScoreDataType, type ScoreDto, type ScoreSource } from '@tracewell/db'
import { scoreValue } from './score-value.ts'

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
}

/** Checks a score against its name's configuration (a 400 when it does not fit) and upserts it. */
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
  })
}
