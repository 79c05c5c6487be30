import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiRequest } from './client.ts'
import type { Static } from '@sinclair/typebox'
import type { ChangeMemberBodySchema, CreatedInvitationSchema, CreateInvitationBodySchema, InvitationSchema, ProjectRoleGrant, TeamMember } from '@tracewell/api-schemas'

// A team's members and invitations (docs/accounts.md#invitations-and-members).

export type { ProjectRoleGrant }
export type Member = TeamMember
export type Invitation = Static<typeof InvitationSchema>
export type CreatedInvitation = Static<typeof CreatedInvitationSchema>

const teamPath = (teamId: string) => `/api/teams/${encodeURIComponent(teamId)}`
const membersKey = (teamId: string) => ['members', teamId] as const
const invitationsKey = (teamId: string) => ['invitations', teamId] as const

export function useMembers(teamId: string) {
  return useQuery({ queryKey: membersKey(teamId), queryFn: () => apiGet<{ members: Member[] }>(`${teamPath(teamId)}/members`), select: (data) => data.members })
}

export function useInvitations(teamId: string) {
  return useQuery({ queryKey: invitationsKey(teamId), queryFn: () => apiGet<{ invitations: Invitation[] }>(`${teamPath(teamId)}/invitations`), select: (data) => data.invitations })
}

export function useInvite(teamId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: Static<typeof CreateInvitationBodySchema>) => apiRequest<CreatedInvitation>('POST', `${teamPath(teamId)}/invitations`, body),
    onSuccess: () => client.invalidateQueries({ queryKey: invitationsKey(teamId) }),
  })
}

export function useRevokeInvitation(teamId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (invitationId: string) => apiRequest<void>('DELETE', `${teamPath(teamId)}/invitations/${encodeURIComponent(invitationId)}`),
    onSuccess: () => client.invalidateQueries({ queryKey: invitationsKey(teamId) }),
  })
}

export function useChangeMember(teamId: string, userId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: Static<typeof ChangeMemberBodySchema>) =>
      apiRequest<Member>('PATCH', `${teamPath(teamId)}/members/${encodeURIComponent(userId)}`, body),
    onSuccess: () => client.invalidateQueries({ queryKey: membersKey(teamId) }),
  })
}

export function useRemoveMember(teamId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (userId: string) => apiRequest<void>('DELETE', `${teamPath(teamId)}/members/${encodeURIComponent(userId)}`),
    onSuccess: () => client.invalidateQueries({ queryKey: membersKey(teamId) }),
  })
}
