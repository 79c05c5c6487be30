import { recordScore as storeScore, ScoreValueError, type Executor, type ScoreDto, type ScoreInput } from '@tracewell/db'
import { BadRequestError } from '@tracewell/http'

/** @tracewell/db's recordScore, a score that does not fit its configuration answered as a 400 naming where. */
export async function recordScore(db: Executor, input: ScoreInput, where = 'body/value'): Promise<{ score: ScoreDto; created: boolean }> {
  try {
    return await storeScore(db, input, where)
  } catch (error) {
    if (error instanceof ScoreValueError) throw new BadRequestError(error.message)
    throw error
  }
}
