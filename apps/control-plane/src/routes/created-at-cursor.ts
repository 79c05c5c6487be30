import { BadRequestError } from '@tracewell/http'

// The cursor of lists in creation order, newest first (scores, an evaluator's judgments): opaque
// to clients, base64url of the last row's creation time (as Postgres wrote it) and id.

export interface CreatedAtCursor {
  createdAt: string
  id: string
}

const postgresTime = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/

export const encodeCreatedAtCursor = (cursor: CreatedAtCursor): string => Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url')

/** A cursor this API returned, its id of the list's own form (`idPattern`); anything else is a 400. */
export function decodeCreatedAtCursor(raw: string, idPattern: RegExp): CreatedAtCursor {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'))
  } catch {
    parsed = undefined
  }
  const [createdAt, id] = Array.isArray(parsed) ? (parsed as unknown[]) : []
  if (typeof createdAt !== 'string' || !postgresTime.test(createdAt) || typeof id !== 'string' || !idPattern.test(id)) {
    throw new BadRequestError('querystring/cursor: not a nextCursor returned by this API')
  }
  return { createdAt, id }
}
