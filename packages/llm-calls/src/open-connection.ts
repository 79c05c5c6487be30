import { openSecret } from '@tracewell/auth'
import { findSealedLlmConnection, llmConnectionKeyContext, type Db } from '@tracewell/db'
import { ModelCallError } from './chat.client.ts'

// An LLM connection with its key opened: what a call to the model under test needs. The key is
// sealed with LLM_CONNECTION_ENCRYPTION_KEY and the project (the context), so a connection copied
// into another project does not open.

export interface OpenConnection {
  projectId: string
  baseUrl: string
  apiKey: string
}

export async function openConnection(db: Db, connectionId: string | null, encryptionKey: Buffer): Promise<OpenConnection> {
  const connection = connectionId === null ? undefined : await findSealedLlmConnection(db, connectionId)
  if (connection === undefined) throw new ModelCallError('the LLM connection no longer exists', false)
  try {
    return { projectId: connection.projectId, baseUrl: connection.baseUrl, apiKey: openSecret(connection.apiKeySealed, encryptionKey, llmConnectionKeyContext(connection.projectId)) }
  } catch {
    throw new ModelCallError('the LLM connection’s key does not open with this LLM_CONNECTION_ENCRYPTION_KEY (was the key changed?)', false)
  }
}
