import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

// `npm start` must serve the console without a setting to make up first, and its sessions must
// survive a restart: without SESSION_SECRET, a secret is generated on the first start and kept
// beside the embedded database, readable by its owner only (like default-keys.json).

const fileName = 'session-secret'

export function sessionSecretPath(dataDir: string): string {
  return join(dataDir, fileName)
}

export interface KeptSessionSecret {
  secret: string
  /** False when the data directory could not keep it: sessions then end with the process. */
  kept: boolean
}

/** The secret kept in `dataDir`, made and saved now if there is none. */
export async function keptSessionSecret(dataDir: string): Promise<KeptSessionSecret> {
  const path = sessionSecretPath(dataDir)
  const saved = await readSecret(path)
  if (saved !== null) return { secret: saved, kept: true }
  const secret = randomBytes(32).toString('base64url')
  try {
    await mkdir(dataDir, { recursive: true })
    // 'wx': of two processes starting on one data directory, the second keeps the first's secret.
    await writeFile(path, `${secret}\n`, { mode: 0o600, flag: 'wx' })
    return { secret, kept: true }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return { secret, kept: false }
    const raced = await readSecret(path)
    return raced === null ? { secret, kept: false } : { secret: raced, kept: true }
  }
}

async function readSecret(path: string): Promise<string | null> {
  try {
    const text = (await readFile(path, 'utf8')).trim()
    if (text.length < 32) throw new Error(`${path} holds fewer than 32 characters, too few for a session secret: delete it and a new one is made at the next start`)
    return text
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}
