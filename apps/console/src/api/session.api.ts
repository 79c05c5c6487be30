import { queryOptions, useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query'
import { ApiError, apiGet, apiRequest, chooseRequestTeam } from './client.ts'
import type { Me, Session } from './types.ts'
import type { ConsoleSession } from '@tracewell/api-schemas'

export const sessionKey = ['session'] as const

const teamStorageKey = 'tracewell.team'

function storedTeam(): string | null {
  try {
    return localStorage.getItem(teamStorageKey)
  } catch {
    return null
  }
}

function storeTeam(teamId: string): void {
  try {
    localStorage.setItem(teamStorageKey, teamId)
  } catch {
    // Storage may be off (private mode): the choice lasts until the page reloads.
  }
}

/** The team the person last chose in the team switcher, if they still belong to it; else their first. */
function sessionOfPerson(me: Me): Session | null {
  const chosen = storedTeam()
  const team = me.teams.find((candidate) => candidate.id === chosen) ?? me.teams[0]
  // A person in no team yet (open sign-up, or removed from every team) has nothing to work in.
  if (team === undefined) return { kind: 'person', teamId: '', teamName: 'No team yet', role: 'viewer', user: me.user, teams: [] }
  chooseRequestTeam(team.id)
  return { kind: 'person', teamId: team.id, teamName: team.name, role: team.role, user: me.user, teams: me.teams }
}

/** A team-key session (an upgraded install's console): it acts as an admin of its team. */
function sessionOfTeamKey(session: ConsoleSession): Session {
  chooseRequestTeam(null)
  return { kind: 'team-key', teamId: session.teamId, teamName: session.teamName, role: 'admin', teams: [] }
}

async function orNullWhenSignedOut<T>(request: Promise<T>): Promise<T | null> {
  try {
    return await request
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null
    throw error
  }
}

/** Who is signed in (a person, else a team-key session); null when nobody is (a 401 is an answer here, not an error). */
export const sessionQuery = queryOptions({
  queryKey: sessionKey,
  // The team-key session is asked first: GET /api/me is a person's, and refuses a key (403).
  queryFn: async (): Promise<Session | null> => {
    const keySession = await orNullWhenSignedOut(apiGet<ConsoleSession>('/api/session'))
    if (keySession !== null) return sessionOfTeamKey(keySession)
    const me = await orNullWhenSignedOut(apiGet<Me>('/api/me'))
    return me === null ? null : sessionOfPerson(me)
  },
  staleTime: 60_000,
})

export function useSession() {
  return useQuery(sessionQuery)
}

/** Signs a person in with their email and password. */
export function useSignIn() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (credentials: { email: string; password: string }) => apiRequest<Me>('POST', '/api/auth/sign-in', credentials),
    onSuccess: async (me) => {
      await settleSession(client, sessionOfPerson(me))
    },
  })
}

/** Signs the console in with a team key (installs that upgrade, until an owner account exists). */
export function useKeySignIn() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (apiKey: string) => apiRequest<ConsoleSession>('POST', '/api/session', { apiKey }),
    onSuccess: async (session) => {
      await settleSession(client, sessionOfTeamKey(session))
    },
  })
}

export function useSignOut() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: async (session: Session) => apiRequest<void>(session.kind === 'person' ? 'POST' : 'DELETE', session.kind === 'person' ? '/api/auth/sign-out' : '/api/session'),
    onSuccess: async () => {
      await settleSession(client, null)
    },
  })
}

/** The team switcher: every team route is about the chosen team from now on; nothing of the last one stays. */
export function useSwitchTeam() {
  const client = useQueryClient()
  return (session: Session, teamId: string) => {
    const team = session.teams.find((candidate) => candidate.id === teamId)
    if (team === undefined) return
    storeTeam(team.id)
    chooseRequestTeam(team.id)
    forgetEverythingButTheSession(client)
    client.setQueryData(sessionKey, { ...session, teamId: team.id, teamName: team.name, role: team.role })
  }
}

/**
 * The session as the sign-in or sign-out just made it. A fetch of the session still under way
 * was sent with the cookie as it was before (a 401 of a signed-out page asks for the session
 * again): it is cancelled first, or its answer, arriving after, would undo the sign-in (seen in
 * the browser tests on a loaded machine: signed in, then back on the sign-in page).
 */
async function settleSession(client: QueryClient, session: Session | null): Promise<void> {
  await client.cancelQueries({ queryKey: sessionKey })
  forgetEverythingButTheSession(client)
  client.setQueryData(sessionKey, session)
}

/**
 * Another team may sign in next: nothing cached for this one may show. The session query itself
 * stays (its observers would not see a query made anew), and is set by the caller.
 */
function forgetEverythingButTheSession(client: QueryClient): void {
  client.removeQueries({ predicate: (query) => query.queryKey[0] !== sessionKey[0] })
}
