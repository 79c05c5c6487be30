import { newSecretToken, secretTokenHash } from '@tracewell/auth'
import { anyTeamOwnerExists, createSetupLink, createTeam, findOldestTeam, findSetupLink, findTeamByName, findUserCredentialsByEmail, lockWorkspaceBootstrap, useSetupLinks, type Db } from '@tracewell/db'
import type { Logger } from '@tracewell/logger'
import { defaultTeamName } from '../bootstrap.ts'
import { createPasswordAccount, joinTeam } from './new-account.ts'

// The first owner of an install (docs/accounts.md#the-first-owner; issue 44 §1). There is no open
// sign-up by default, so someone must be made owner without an invitation: headlessly from
// INIT_USER_EMAIL and INIT_USER_PASSWORD (containers, tests), or by whoever opens the setup link
// printed at start. Both run under the bootstrap lock, so replicas starting together and a setup
// link used at that moment make one owner.

export interface FirstOwnerSettings {
  INIT_USER_EMAIL?: string | undefined
  INIT_USER_PASSWORD?: string | undefined
  INIT_TEAM_NAME?: string | undefined
}

/**
 * Makes INIT_USER_EMAIL the owner of the default team (INIT_TEAM_NAME's, else the oldest, else a
 * new one) while no team has an owner. Safe at every start: once there is an owner, or the email
 * has an account, nothing changes (the password is never reset from the setting).
 */
export async function ensureInitialOwner(db: Db, settings: FirstOwnerSettings, log: Logger): Promise<void> {
  const { INIT_USER_EMAIL: email, INIT_USER_PASSWORD: password } = settings
  if (email === undefined && password === undefined) return
  if (email === undefined || password === undefined) throw new Error('INIT_USER_EMAIL and INIT_USER_PASSWORD: set both, or neither')
  await db.transaction().execute(async (trx) => {
    await lockWorkspaceBootstrap(trx)
    if (await anyTeamOwnerExists(trx)) return
    if ((await findUserCredentialsByEmail(trx, email)) !== undefined) {
      log.warn({ email }, 'bootstrap: INIT_USER_EMAIL has an account already but no team has an owner; it is left as it is (use the setup link)')
      return
    }
    const named = settings.INIT_TEAM_NAME === undefined ? undefined : await findTeamByName(trx, settings.INIT_TEAM_NAME)
    const team = named ?? (await findOldestTeam(trx)) ?? (await createTeam(trx, { name: defaultTeamName }))
    // The operator wrote the address into the server's settings: it is theirs.
    const owner = await createPasswordAccount(trx, { email, name: email.split('@')[0] ?? email, password, emailVerified: true }).catch((error: Error) => {
      throw new Error(`INIT_USER_PASSWORD: ${error.message.replace(/^body\/password: /, '')}`)
    })
    await joinTeam(trx, team.id, owner.id, 'owner')
    await useSetupLinks(trx)
    log.info({ userId: owner.id, teamId: team.id }, 'bootstrap: made INIT_USER_EMAIL the owner of the default team')
  })
}

/**
 * The setup link's token while no team has an owner, else null. `kept` is the token an earlier
 * start printed (`npm start` keeps it in DATA_DIR): it stays the link while unused, so what
 * `npm run keys` prints again is what was printed first.
 */
export async function offerSetupLink(db: Db, kept?: string | null): Promise<string | null> {
  return db.transaction().execute(async (trx) => {
    await lockWorkspaceBootstrap(trx)
    if (await anyTeamOwnerExists(trx)) return null
    if (kept != null && (await findSetupLink(trx, secretTokenHash(kept)))?.used === false) return kept
    const { token, tokenHash } = newSecretToken()
    await createSetupLink(trx, tokenHash)
    return token
  })
}

/** The console page of the setup link. */
export const setupPath = (token: string) => `/setup/${token}`
