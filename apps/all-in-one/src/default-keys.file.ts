import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { DefaultWorkspace } from '@tracewell/control-plane'

// The database holds only the hashes of the keys created on the first start, so the secrets the
// banner printed could not be shown again. They are kept in a file of their own beside the
// embedded database instead, readable by its owner only (as Jenkins keeps its initial admin
// password), and the file is removed once the keys stop being the defaults (one was revoked).

const fileName = 'default-keys.json'

export function defaultKeysPath(dataDir: string): string {
  return join(dataDir, fileName)
}

export async function saveDefaultKeys(dataDir: string, workspace: DefaultWorkspace): Promise<void> {
  await mkdir(dataDir, { recursive: true })
  await writeFile(defaultKeysPath(dataDir), `${JSON.stringify(workspace, null, 2)}\n`, { mode: 0o600 })
}

/** The saved default keys, or null when there are none (never created here, or since removed). */
export async function readDefaultKeys(dataDir: string): Promise<DefaultWorkspace | null> {
  let text: string
  try {
    text = await readFile(defaultKeysPath(dataDir), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  const saved = JSON.parse(text) as Record<keyof DefaultWorkspace, unknown>
  const fields = ['teamId', 'teamName', 'projectId', 'projectName', 'teamApiKey', 'projectApiKey'] as const
  const missing = fields.filter((field) => typeof saved[field] !== 'string')
  if (missing.length > 0) throw new Error(`${defaultKeysPath(dataDir)}: not a default keys file (no ${missing.join(', ')})`)
  return saved as DefaultWorkspace
}

export async function removeDefaultKeys(dataDir: string): Promise<void> {
  await rm(defaultKeysPath(dataDir), { force: true })
}

// Where the last `npm start` listened, for `npm run keys`: run in another shell it would otherwise
// name the default port whatever PORT the server was given.
const baseUrlFileName = 'base-url'

export async function saveBaseUrl(dataDir: string, baseUrl: string): Promise<void> {
  await mkdir(dataDir, { recursive: true })
  await writeFile(join(dataDir, baseUrlFileName), `${baseUrl}\n`)
}

/** The base URL the last `npm start` with this DATA_DIR listened at, or null. */
export async function readBaseUrl(dataDir: string): Promise<string | null> {
  try {
    const text = (await readFile(join(dataDir, baseUrlFileName), 'utf8')).trim()
    return /^https?:\/\/\S+$/.test(text) ? text : null
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}
