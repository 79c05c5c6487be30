import { hashApiKey, type KeyKind } from '@tracewell/auth'
import {
  createProject,
  createTeam,
  findApiKeyIdentityByHash,
  findProjectById,
  findTeamByName,
  findTeamProjectByName,
  hasNoTeams,
  lockWorkspaceBootstrap,
  type Db,
  type Executor,
} from '@tracewell/db'
import type { Logger } from '@tracewell/logger'
import { mintApiKey, type KeyScope } from './mint-api-key.ts'

/** The INIT_* settings (docs/api.md#bootstrap; a subset of every config that has them). */
export interface BootstrapSettings {
  INIT_TEAM_NAME?: string | undefined
  INIT_TEAM_API_KEY?: string | undefined
  INIT_PROJECT_NAME?: string | undefined
  INIT_PROJECT_ID?: string | undefined
  INIT_PROJECT_API_KEY?: string | undefined
}

export interface BootstrapResult {
  teamId: string
  projectId: string | null
  /** What this run created, e.g. ['team', 'project', 'team key']; empty when all existed. */
  created: string[]
}

export const defaultTeamName = 'Default team'
export const defaultProjectName = 'Default project'

/**
 * Creates the team, project and keys the INIT_* settings name, unless they exist: safe to run at
 * every start of every replica (one transaction under an advisory lock, so replicas starting
 * together cannot each create the team). Given keys are stored verbatim (as their hash), so keys
 * carried over from Langtrace keep working. A key that exists is never changed: not moved to
 * another project, and not brought back if it was revoked.
 */
export async function bootstrapFromSettings(db: Db, settings: BootstrapSettings, log: Logger): Promise<BootstrapResult | null> {
  const { INIT_TEAM_NAME, INIT_TEAM_API_KEY, INIT_PROJECT_NAME, INIT_PROJECT_ID, INIT_PROJECT_API_KEY } = settings
  if ([INIT_TEAM_NAME, INIT_TEAM_API_KEY, INIT_PROJECT_NAME, INIT_PROJECT_ID, INIT_PROJECT_API_KEY].every((value) => value === undefined)) return null

  return db.transaction().execute(async (trx) => {
    await lockWorkspaceBootstrap(trx)
    const created: string[] = []
    let project = INIT_PROJECT_ID === undefined ? undefined : await findProjectById(trx, INIT_PROJECT_ID)

    let teamId: string
    if (INIT_TEAM_NAME === undefined && project !== undefined) {
      teamId = project.teamId
    } else {
      const teamName = INIT_TEAM_NAME ?? defaultTeamName
      const team = await findTeamByName(trx, teamName)
      if (team) teamId = team.id
      else {
        teamId = (await createTeam(trx, { name: teamName })).id
        created.push('team')
        log.info({ teamId, teamName }, 'bootstrap: created team')
      }
    }
    if (project !== undefined && project.teamId !== teamId) {
      log.warn({ projectId: project.id, teamId: project.teamId }, 'bootstrap: INIT_PROJECT_ID is a project of another team; it stays there')
    }

    if (project === undefined && (INIT_PROJECT_ID !== undefined || INIT_PROJECT_NAME !== undefined || INIT_PROJECT_API_KEY !== undefined)) {
      const projectName = INIT_PROJECT_NAME ?? defaultProjectName
      if (INIT_PROJECT_ID === undefined) project = await findTeamProjectByName(trx, teamId, projectName)
      if (project === undefined) {
        project = await createProject(trx, { teamId, name: projectName, ...(INIT_PROJECT_ID === undefined ? {} : { id: INIT_PROJECT_ID }) })
        created.push('project')
        log.info({ projectId: project.id, projectName }, 'bootstrap: created project')
      }
    }

    if (INIT_TEAM_API_KEY !== undefined && (await ensureKey(trx, log, 'team', { teamId, projectId: null }, INIT_TEAM_API_KEY))) created.push('team key')
    if (INIT_PROJECT_API_KEY !== undefined && project !== undefined) {
      if (await ensureKey(trx, log, 'project', { teamId: project.teamId, projectId: project.id }, INIT_PROJECT_API_KEY)) created.push('project key')
    }
    return { teamId, projectId: project?.id ?? null, created }
  })
}

/** Stores a given key unless its hash is known; true when it was stored now. */
async function ensureKey(trx: Executor, log: Logger, kind: KeyKind, scope: KeyScope, secret: string): Promise<boolean> {
  const keyHash = hashApiKey(secret)
  const existing = await findApiKeyIdentityByHash(trx, keyHash)
  const setting = kind === 'team' ? 'INIT_TEAM_API_KEY' : 'INIT_PROJECT_API_KEY'
  if (existing) {
    if (existing.kind !== kind || existing.teamId !== scope.teamId || existing.projectId !== scope.projectId) {
      log.warn({ keyId: existing.id, kind: existing.kind }, `bootstrap: ${setting} is already a key of another ${existing.kind === 'team' ? 'team' : 'project'}; left unchanged`)
    } else if (existing.revoked) {
      log.warn({ keyId: existing.id }, `bootstrap: ${setting} was revoked; it stays revoked`)
    }
    return false
  }
  const { key } = await mintApiKey(trx, kind, scope, secret)
  log.info({ keyId: key.id, prefix: key.prefix }, `bootstrap: stored ${setting}`)
  return true
}

export interface DefaultWorkspace {
  teamId: string
  teamName: string
  projectId: string
  projectName: string
  /** Secrets, for the caller to show once; they are stored only as hashes. */
  teamApiKey: string
  projectApiKey: string
}

/**
 * First start of the all-in-one process: only when there is no team at all, creates
 * a default team and project with one key each and returns the secrets; otherwise null.
 */
export async function ensureDefaultWorkspace(db: Db): Promise<DefaultWorkspace | null> {
  return db.transaction().execute(async (trx) => {
    await lockWorkspaceBootstrap(trx)
    if (!(await hasNoTeams(trx))) return null
    const team = await createTeam(trx, { name: defaultTeamName })
    const project = await createProject(trx, { teamId: team.id, name: defaultProjectName })
    const { secret: teamApiKey } = await mintApiKey(trx, 'team', { teamId: team.id, projectId: null })
    const { secret: projectApiKey } = await mintApiKey(trx, 'project', { teamId: team.id, projectId: project.id })
    return { teamId: team.id, teamName: team.name, projectId: project.id, projectName: project.name, teamApiKey, projectApiKey }
  })
}

/** True while both default keys still open the API (neither revoked): only then are they worth showing again. */
export async function defaultKeysAreLive(db: Executor, workspace: Pick<DefaultWorkspace, 'teamApiKey' | 'projectApiKey'>): Promise<boolean> {
  for (const secret of [workspace.teamApiKey, workspace.projectApiKey]) {
    const key = await findApiKeyIdentityByHash(db, hashApiKey(secret))
    if (key === undefined || key.revoked) return false
  }
  return true
}
