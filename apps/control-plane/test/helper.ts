import { ControlPlaneConfigSchema, loadConfig } from '@tracewell/config'
import { createProject, createTeam, type Db } from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { buildApp, type ControlPlaneDeps } from '../src/index.ts'
import { mintApiKey } from '../src/mint-api-key.ts'

export const adminKey = 'admin-secret-for-tests-0123456789abcdef'

export interface TestControlPlane {
  app: App
  db: Db
  url: string
  close(): Promise<void>
}

/** The control plane on a fresh database of its own (one per test file). */
export async function startControlPlane(settings: Record<string, string> = {}, deps: Omit<ControlPlaneDeps, 'db'> = {}): Promise<TestControlPlane> {
  const database = await createTestDatabase()
  const config = loadConfig(ControlPlaneConfigSchema, { DATABASE_URL: database.url, LOG_LEVEL: 'silent', ADMIN_API_KEY: adminKey, ...settings })
  const app = await buildApp(config, { ...deps, db: database.db })
  await app.ready()
  return {
    app,
    db: database.db,
    url: database.url,
    async close() {
      await app.close()
      await database.drop()
    },
  }
}

export interface Workspace {
  teamId: string
  teamKey: string
  projectId: string
  projectKey: string
}

/** A team with a team key and one project with a project key, straight through the repositories. */
export async function seedWorkspace(db: Db, name = 'Team'): Promise<Workspace> {
  const team = await createTeam(db, { name })
  const project = await createProject(db, { teamId: team.id, name: `${name} project` })
  const { secret: teamKey } = await mintApiKey(db, 'team', { teamId: team.id, projectId: null })
  const { secret: projectKey } = await mintApiKey(db, 'project', { teamId: team.id, projectId: project.id })
  return { teamId: team.id, teamKey, projectId: project.id, projectKey }
}

export const unauthorized = { message: 'Invalid api key unauthorized' }
