import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AllInOneConfigSchema, loadConfig } from '@tracewell/config'
import type { Db } from '@tracewell/db'
import { buildAllInOneApp } from '../app.ts'
import type { OpenApiDocument } from './route-index.ts'

// Every optional route on: the console's sessions (a session secret), cleanup (a cron key). The
// data directory is a temporary one, so no `npm start` data is touched.
const everyRoute = { CRON_API_KEY: 'docs-cron-key-0123456789abcdef0123456789', SESSION_SECRET: 'docs-session-secret-0123456789abcdef0123456789', LOG_LEVEL: 'silent' }

/** The OpenAPI document of the all-in-one app with every route on: over `db` when given, else over an embedded database of its own. */
export async function allRoutesOpenApi(options: { databaseUrl?: string; db?: Db } = {}): Promise<OpenApiDocument> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tracewell-docs-'))
  try {
    const config = loadConfig(AllInOneConfigSchema, { ...everyRoute, DATA_DIR: dataDir, ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}) })
    const { app } = await buildAllInOneApp(config, options.db ? { db: options.db } : {})
    try {
      return (await app.inject({ url: '/docs/json' })).json() as OpenApiDocument
    } finally {
      await app.close()
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}
