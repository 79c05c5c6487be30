import type { Executor } from './executor.ts'

// A project's LLM connections: OpenAI-compatible endpoints its evaluators call. The API key is
// stored only sealed (the caller seals it, @tracewell/auth's sealSecret); it is never returned by
// the API, only its last four characters.

export interface LlmConnectionDto {
  id: string
  projectId: string
  name: string
  provider: 'openai'
  baseUrl: string
  apiKeyHint: string
  createdAt: string
}

/** A connection with its sealed key: what the evaluator worker opens. */
export interface SealedLlmConnection extends LlmConnectionDto {
  apiKeySealed: string
}

/** What a connection's sealed key is bound to (sealSecret's context): it opens for its own project only. */
export const llmConnectionKeyContext = (projectId: string) => `llm-connection:${projectId}`

/** Postgres's unique_violation for a second connection of one name in a project. */
export const LLM_CONNECTION_EXISTS = 'llm_connections_name_unique'

interface Row {
  id: string
  project_id: string
  name: string
  provider: 'openai'
  base_url: string
  api_key_sealed: string
  api_key_hint: string
  created_at: Date
}

const toDto = (row: Row): LlmConnectionDto => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  provider: row.provider,
  baseUrl: row.base_url,
  apiKeyHint: row.api_key_hint,
  createdAt: row.created_at.toISOString(),
})

export async function createLlmConnection(
  db: Executor,
  connection: { projectId: string; name: string; provider: 'openai'; baseUrl: string; apiKeySealed: string; apiKeyHint: string },
): Promise<LlmConnectionDto> {
  const row = await db
    .insertInto('llm_connections')
    .values({
      project_id: connection.projectId,
      name: connection.name,
      provider: connection.provider,
      base_url: connection.baseUrl,
      api_key_sealed: connection.apiKeySealed,
      api_key_hint: connection.apiKeyHint,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toDto(row)
}

export async function listLlmConnections(db: Executor, projectId: string): Promise<LlmConnectionDto[]> {
  const rows = await db.selectFrom('llm_connections').selectAll().where('project_id', '=', projectId).orderBy('name').execute()
  return rows.map(toDto)
}

export async function findLlmConnection(db: Executor, projectId: string, id: string): Promise<LlmConnectionDto | undefined> {
  const row = await db.selectFrom('llm_connections').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : toDto(row)
}

export async function findSealedLlmConnection(db: Executor, id: string): Promise<SealedLlmConnection | undefined> {
  const row = await db.selectFrom('llm_connections').selectAll().where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : { ...toDto(row), apiKeySealed: row.api_key_sealed }
}

/**
 * 'deleted', 'missing', or 'in_use' when an evaluator still calls it. The project is checked first:
 * another project's connection is 'missing' whatever uses it, so its id is never confirmed.
 */
export async function deleteLlmConnection(db: Executor, projectId: string, id: string): Promise<'deleted' | 'missing' | 'in_use'> {
  const result = await db
    .deleteFrom('llm_connections')
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('evaluators').select('evaluators.id').whereRef('evaluators.connection_id', '=', 'llm_connections.id'))))
    .executeTakeFirst()
  if (result.numDeletedRows > 0n) return 'deleted'
  return (await findLlmConnection(db, projectId, id)) === undefined ? 'missing' : 'in_use'
}
