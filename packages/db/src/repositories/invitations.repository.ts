import { sql } from 'kysely'
import type { Executor } from './executor.ts'
import type { ProjectRoleName, TeamRoleName } from './team-members.repository.ts'

// Invitations to a team (docs/accounts.md#invitations-and-members). The link's token is stored as
// its SHA-256 only; an invitation is used once (accepted_at), may be revoked, and expires. Who may
// invite whom is @tracewell/policy's question; these functions only store.

export type InvitationState = 'pending' | 'expired' | 'accepted' | 'revoked'

export interface InvitationProjectRole {
  projectId: string
  role: ProjectRoleName
}

export interface InvitationDto {
  id: string
  teamId: string
  email: string
  role: TeamRoleName
  projectRoles: InvitationProjectRole[]
  invitedBy: { id: string; name: string } | null
  mailed: boolean
  state: InvitationState
  createdAt: string
  expiresAt: string
}

/** An invitation as its link's page and its acceptance see it. */
export interface InvitationByToken extends InvitationDto {
  teamName: string
}

interface InvitationRow {
  id: string
  team_id: string
  email: string
  role: TeamRoleName
  project_roles: InvitationProjectRole[]
  mailed: boolean
  created_at: Date
  expires_at: Date
  accepted_at: Date | null
  revoked_at: Date | null
  inviter_id: string | null
  inviter_name: string | null
}

function stateOf(row: Pick<InvitationRow, 'accepted_at' | 'revoked_at' | 'expires_at'>, now = Date.now()): InvitationState {
  if (row.accepted_at !== null) return 'accepted'
  if (row.revoked_at !== null) return 'revoked'
  return row.expires_at.getTime() <= now ? 'expired' : 'pending'
}

function toInvitationDto(row: InvitationRow): InvitationDto {
  return {
    id: row.id,
    teamId: row.team_id,
    email: row.email,
    role: row.role,
    projectRoles: row.project_roles,
    invitedBy: row.inviter_id === null ? null : { id: row.inviter_id, name: row.inviter_name ?? '' },
    mailed: row.mailed,
    state: stateOf(row),
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
  }
}

function selectInvitations(db: Executor) {
  return db
    .selectFrom('invitations')
    .leftJoin('users as inviter', 'inviter.id', 'invitations.invited_by_user_id')
    .select([
      'invitations.id', 'invitations.team_id', 'invitations.email', 'invitations.role', 'invitations.project_roles', 'invitations.mailed',
      'invitations.created_at', 'invitations.expires_at', 'invitations.accepted_at', 'invitations.revoked_at',
      'inviter.id as inviter_id', 'inviter.name as inviter_name',
    ])
}

export interface NewInvitation {
  teamId: string
  email: string
  role: TeamRoleName
  projectRoles: InvitationProjectRole[]
  tokenHash: string
  invitedByUserId: string | null
  expiresAt: Date
}

/** How many invitations the team made since `since`, and when the oldest of them was made. */
export async function teamInvitationsSince(db: Executor, teamId: string, since: Date): Promise<{ count: number; oldest: Date | null }> {
  const row = await db
    .selectFrom('invitations')
    .select((eb) => [eb.fn.countAll<string>().as('count'), eb.fn.min('created_at').as('oldest')])
    .where('team_id', '=', teamId)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow()
  return { count: Number(row.count), oldest: row.oldest === null ? null : new Date(row.oldest) }
}

/**
 * Stores an invitation. An open invitation of the team for the same email (in any case) is
 * revoked first: inviting again is how a lost or expired link is replaced, and only the newest
 * link works.
 */
export async function createInvitation(db: Executor, invitation: NewInvitation): Promise<InvitationDto> {
  await db
    .updateTable('invitations')
    .set({ revoked_at: sql`now()` })
    .where('team_id', '=', invitation.teamId)
    .where(sql`lower(email)`, '=', invitation.email.toLowerCase())
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .execute()
  const { id } = await db
    .insertInto('invitations')
    .values({
      team_id: invitation.teamId,
      email: invitation.email,
      role: invitation.role,
      project_roles: JSON.stringify(invitation.projectRoles),
      token_hash: invitation.tokenHash,
      invited_by_user_id: invitation.invitedByUserId,
      expires_at: invitation.expiresAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return toInvitationDto(await selectInvitations(db).where('invitations.id', '=', id).executeTakeFirstOrThrow())
}

export async function markInvitationMailed(db: Executor, invitationId: string): Promise<void> {
  await db.updateTable('invitations').set({ mailed: true }).where('id', '=', invitationId).execute()
}

/** A team's invitations that are neither accepted nor revoked (pending or expired), newest first. */
export async function listOpenInvitations(db: Executor, teamId: string): Promise<InvitationDto[]> {
  const rows = await selectInvitations(db)
    .where('invitations.team_id', '=', teamId)
    .where('invitations.accepted_at', 'is', null)
    .where('invitations.revoked_at', 'is', null)
    .orderBy('invitations.created_at', 'desc')
    .orderBy('invitations.id')
    .execute()
  return rows.map(toInvitationDto)
}

/** Revokes an open invitation of the team; whether there was one. */
export async function revokeInvitation(db: Executor, teamId: string, invitationId: string): Promise<boolean> {
  const result = await db
    .updateTable('invitations')
    .set({ revoked_at: sql`now()` })
    .where('id', '=', invitationId)
    .where('team_id', '=', teamId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/**
 * The invitation whose link carries this token, in whatever state. `forUpdate` locks its row:
 * accepting reads it so, and two acceptances of one link at once are served one after the other
 * (the second finds it accepted).
 */
export async function findInvitationByTokenHash(db: Executor, tokenHash: string, options: { forUpdate?: boolean } = {}): Promise<InvitationByToken | undefined> {
  let query = selectInvitations(db)
    .innerJoin('teams', 'teams.id', 'invitations.team_id')
    .select('teams.name as team_name')
    .where('invitations.token_hash', '=', tokenHash)
  if (options.forUpdate) query = query.forUpdate('invitations')
  const row = await query.executeTakeFirst()
  return row && { ...toInvitationDto(row), teamName: row.team_name }
}

export async function markInvitationAccepted(db: Executor, invitationId: string, userId: string): Promise<void> {
  await db.updateTable('invitations').set({ accepted_at: sql`now()`, accepted_by_user_id: userId }).where('id', '=', invitationId).execute()
}
