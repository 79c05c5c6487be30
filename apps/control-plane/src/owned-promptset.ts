import { findProjectPromptset, type Db, type PromptsetDto } from '@tracewell/db'
import { NotFoundError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'
import { callerProjectId } from './auth.ts'

/** A promptset of the caller's project; another project's promptset is a 404, as if it did not exist. */
export async function ownedPromptset(db: Db, request: FastifyRequest, promptsetId: string): Promise<PromptsetDto> {
  const promptset = await findProjectPromptset(db, callerProjectId(request), promptsetId)
  if (!promptset) throw new NotFoundError('Prompt registry not found')
  return promptset
}
