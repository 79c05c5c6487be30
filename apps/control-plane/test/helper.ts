import { displayPrefix, generateApiKey, hashApiKey } from '@tracewell/auth'
import { ControlPlaneConfigSchema, loadConfig } from '@tracewell/config'
import { createProject, createTeam, insertApiKey, type Db } from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { buildApp, type ControlPlaneDeps } from '../src/index.ts'

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
  const teamKey = generateApiKey('team')
  const projectKey = generateApiKey('project')
  await insertApiKey(db, { kind: 'team', teamId: team.id, projectId: null, keyHash: hashApiKey(teamKey), prefix: displayPrefix(teamKey) })
  await insertApiKey(db, { kind: 'project', teamId: team.id, projectId: project.id, keyHash: hashApiKey(projectKey), prefix: displayPrefix(projectKey) })
  return { teamId: team.id, teamKey, projectId: project.id, projectKey }
}

export const unauthorized = { message: 'Invalid api key unauthorized' }
