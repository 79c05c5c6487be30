import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

// The setup link's token (docs/accounts.md#the-first-owner), kept beside the default keys and
// readable by its owner only, so that `npm run keys` prints the link again while it is unused
// (it reads files only: the embedded database belongs to the running `npm start`). Removed once
// the link is used or an owner exists.

const fileName = 'setup-token'

export function setupTokenPath(dataDir: string): string {
  return join(dataDir, fileName)
}

export async function saveSetupToken(dataDir: string, token: string): Promise<void> {
  await mkdir(dataDir, { recursive: true })
  await writeFile(setupTokenPath(dataDir), `${token}\n`, { mode: 0o600 })
}

/** The kept token, or null when there is none. */
export async function readSetupToken(dataDir: string): Promise<string | null> {
  try {
    const text = (await readFile(setupTokenPath(dataDir), 'utf8')).trim()
    return /^[A-Za-z0-9_-]{20,128}$/.test(text) ? text : null
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

export async function removeSetupToken(dataDir: string): Promise<void> {
  await rm(setupTokenPath(dataDir), { force: true })
}
