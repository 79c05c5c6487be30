/**
 * Every request the console makes: same origin, the session cookie sent by the browser (the key
 * itself is never in the page), and on requests that change data the CSRF header the server
 * requires of cookie-authenticated changes.
 */
export const csrfHeader = 'x-tracewell-csrf'

/** Which of a person's teams team routes are about (docs/accounts.md): the team switcher sets it. */
export const teamHeader = 'x-tracewell-team'

let currentTeamId: string | null = null

/** Sends `x-tracewell-team` with every request from now on (null: the person's first team). */
export function chooseRequestTeam(teamId: string | null): void {
  currentTeamId = teamId
}

export class ApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.name = 'ApiError'
    this.status = status
  }
}

type Query = Record<string, string | number | boolean | null | undefined | readonly string[]>

/** `/api/x?a=1&b=2`, leaving out empty values; arrays repeat the parameter. */
export function apiPath(path: string, query: Query = {}): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue
    if (Array.isArray(value)) for (const item of value) params.append(name, item)
    else params.set(name, String(value))
  }
  const search = params.toString()
  return search === '' ? path : `${path}?${search}`
}

export async function apiRequest<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (method !== 'GET') headers[csrfHeader] = '1'
  if (currentTeamId !== null) headers[teamHeader] = currentTeamId
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? null : JSON.stringify(body) })
  if (response.status === 204) return undefined as T
  const text = await response.text()
  const parsed: unknown = text === '' ? undefined : safeJson(text)
  if (!response.ok) {
    const message = typeof parsed === 'object' && parsed !== null && 'message' in parsed ? String((parsed as { message: unknown }).message) : `${response.status} ${response.statusText}`
    throw new ApiError(response.status, message)
  }
  return parsed as T
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export const apiGet = <T>(path: string) => apiRequest<T>('GET', path)
