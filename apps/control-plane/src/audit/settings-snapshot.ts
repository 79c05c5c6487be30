import type { FastifyRequest } from 'fastify'
import { withoutSecrets } from './secret-fields.ts'

// The settings a change is about, as the API itself shows them: the GET of the changed route's
// own path (PUT /api/projects/:projectId/retention → GET of it), or for an item, of its list
// (PUT …/model-prices/:priceId → GET …/model-prices), asked of this same server with the caller's
// own credentials just before the handler runs and again once it is done. No route needs code of
// its own for it, and a GET shows only what may be shown (never an LLM key or a key's secret);
// fields named like secrets are dropped all the same (secret-fields.ts).

const credentialHeaders = ['x-api-key', 'authorization', 'cookie', 'x-tracewell-team'] as const
/** The query parameters that say which project or team a request is about (authorize.ts). */
const scopeParameters = ['project_id', 'team_id'] as const

/** The settings as a GET shows them now; null where no GET shows them or it did not answer 200. */
export async function settingsSnapshot(request: FastifyRequest): Promise<unknown> {
  const url = snapshotUrlOf(request)
  if (url === null) return null
  const headers: Record<string, string> = {}
  for (const name of credentialHeaders) {
    const value = request.headers[name]
    if (typeof value === 'string') headers[name] = value
  }
  const response = await request.server.inject({ method: 'GET', url, headers })
  if (response.statusCode !== 200) return null
  return withoutSecrets(response.json())
}

function snapshotUrlOf(request: FastifyRequest): string | null {
  const template = request.routeOptions.url
  if (template === undefined) return null
  const list = /\/:[^/]+$/.test(template) ? template.slice(0, template.lastIndexOf('/')) : undefined
  const found = [template, list].find((candidate) => candidate !== undefined && request.server.hasRoute({ method: 'GET', url: candidate }))
  if (found === undefined) return null
  const params = (request.params ?? {}) as Record<string, unknown>
  const path = found.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(String(params[name] ?? '')))
  const query = new URLSearchParams()
  for (const name of scopeParameters) {
    const value = (request.query as Record<string, unknown> | undefined)?.[name]
    if (typeof value === 'string') query.set(name, value)
  }
  return query.size === 0 ? path : `${path}?${query.toString()}`
}
