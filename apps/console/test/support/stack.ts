import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { freePort } from '@tracewell/test-support'

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url))

export interface Stack {
  /** http://127.0.0.1:<port>, the console and the API. */
  url: string
  teamKey: string
  projectKey: string
  projectId: string
  database: TestDatabase
  output(): string
  stop(): Promise<void>
}

const key = (kind: 'team' | 'proj') => `tw_${kind}_${randomBytes(32).toString('base64url')}`

/**
 * `npm start` as a user runs it (apps/all-in-one, the built console included) as a process of its
 * own, on a Postgres database of its own, with a team and a project made by the INIT_* settings.
 */
export async function startStack(settings: Record<string, string> = {}): Promise<Stack> {
  const database = await createTestDatabase()
  const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-console-test-'))
  // A test that must know the address before the start (PUBLIC_URL, an identity provider's redirect URI) chooses the port.
  const port = settings.PORT === undefined ? await freePort() : Number(settings.PORT)
  const teamKey = key('team')
  const projectKey = key('proj')
  const projectId = 'support-bot'
  const child = spawn(process.execPath, ['apps/all-in-one/src/server.ts'], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      GRPC_PORT: '0',
      LOG_LEVEL: 'warn',
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      INIT_TEAM_NAME: 'Acme AI',
      INIT_TEAM_API_KEY: teamKey,
      INIT_PROJECT_NAME: 'Support bot',
      INIT_PROJECT_ID: projectId,
      INIT_PROJECT_API_KEY: projectKey,
      ...settings,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
    await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) {
      await stop()
      throw new Error(`npm start exited with ${child.exitCode}:\n${output}`)
    }
    try {
      if ((await fetch(`${url}/readyz`)).ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`npm start was not ready within a minute:\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return { url, teamKey, projectKey, projectId, database, output: () => output, stop }
}
