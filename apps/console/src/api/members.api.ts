import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import type { ProjectRole, TeamRole } from '@tracewell/policy'
import { apiGet, apiRequest } from './client.ts'

// A team's members and invitations (docs/accounts.md#invitations-and-members).

export interface ProjectRoleGrant {
  projectId: string
  role: ProjectRole
}

export interface Member {
  userId: string
  email: string
  name: string
  role: TeamRole
  projectRoles: ProjectRoleGrant[]
  joinedAt: string
}

export interface Invitation {
  id: string
  email: string
  role: TeamRole
  projectRoles: ProjectRoleGrant[]
  invitedBy: { id: string; name: string } | null
  mailed: boolean
  state: 'pending' | 'expired'
  createdAt: string
  expiresAt: string
}

export interface CreatedInvitation {
  id: string
  url: string
  expiresAt: string
  mailed: boolean
  mailError: string | null
}

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
    mutationFn: (body: { email: string; role: TeamRole; projectRoles: ProjectRoleGrant[] }) => apiRequest<CreatedInvitation>('POST', `${teamPath(teamId)}/invitations`, body),
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
    mutationFn: (body: { role?: TeamRole; projectRoles?: { projectId: string; role: ProjectRole | null }[] }) =>
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
