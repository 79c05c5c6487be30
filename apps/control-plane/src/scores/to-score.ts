import type { ScoreDto } from '@tracewell/db'
import type { Score } from '@tracewell/api-schemas'

/** A stored score as the API shows it: `value` in its own type. */
export function toScore(dto: ScoreDto): Score {
  const value =
    dto.dataType === 'numeric' ? (dto.numericValue as number) : dto.dataType === 'boolean' ? dto.stringValue === 'true' : (dto.stringValue as string)
  return {
    id: dto.id,
    traceId: dto.traceId,
    spanId: dto.spanId,
    sessionId: dto.sessionId,
    name: dto.name,
    dataType: dto.dataType,
    value,
    numericValue: dto.numericValue,
    comment: dto.comment,
    source: dto.source,
    author: dto.author,
    configId: dto.configId,
    evaluatorId: dto.evaluatorId,
    evaluatorName: dto.evaluatorName,
    createdAt: dto.createdAt,
    updatedAt: dto.updatedAt,
  }
}
