import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

// `npm start` lets people connect judge models without a setting to make up first: without
// LLM_CONNECTION_ENCRYPTION_KEY, a key is generated on the first start and kept beside the
// embedded database, readable by its owner only (as the session secret is). Losing it loses the
// LLM connections' keys (they no longer open); they are made again with their API keys.

const fileName = 'llm-connection-key'

export function llmConnectionKeyPath(dataDir: string): string {
  return join(dataDir, fileName)
}

/** The key (64 hex characters) kept in `dataDir`, made and saved now if there is none; `kept` false when it could not be saved. */
export async function keptLlmConnectionKey(dataDir: string): Promise<{ key: string; kept: boolean }> {
  const path = llmConnectionKeyPath(dataDir)
  const saved = await readKey(path)
  if (saved !== null) return { key: saved, kept: true }
  const key = randomBytes(32).toString('hex')
  try {
    await mkdir(dataDir, { recursive: true })
    // 'wx': of two processes starting on one data directory, the second keeps the first's key.
    await writeFile(path, `${key}\n`, { mode: 0o600, flag: 'wx' })
    return { key, kept: true }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return { key, kept: false }
    const raced = await readKey(path)
    return raced === null ? { key, kept: false } : { key: raced, kept: true }
  }
}

async function readKey(path: string): Promise<string | null> {
  try {
    const text = (await readFile(path, 'utf8')).trim()
    if (!/^[0-9a-fA-F]{64}$/.test(text)) throw new Error(`${path} does not hold 64 hex characters: restore it, or delete it (the LLM connections' keys are then lost) and a new one is made at the next start`)
    return text
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}
