import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findLivePrompt, findProjectPromptset, findPromptVersion, type Db } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import type { FastifyReply } from 'fastify'
import { callerProjectId, requireProjectKey } from '../auth.ts'
import type { PromptCache, RegistryLookup } from '../prompt-cache.ts'
import { declaredValues, filledJson, missingValues, toPromptView } from '../prompt-view.ts'
import { errorResponses, RegistrySchema } from '../schemas.ts'

// GET /api/promptset, what the Langtrace SDKs call: the TypeScript SDK sends
// `promptset_id`, `version` and `variables.<name>` through URLSearchParams, the Python SDK through
// urlencode; both encode a space as `+`. The apps' query parser (@tracewell/http's parseQueryString,
// equivalent to Fastify's default) decodes keys and values as a form would (`+` is a space, %XX
// escapes), which a test pins down.

export const GetPromptQuerySchema = Type.Object(
  {
    promptset_id: Type.Optional(Type.String({ maxLength: 200, description: 'the registry id (what the SDKs send)' })),
    promptsetid: Type.Optional(Type.String({ maxLength: 200, description: 'alias of promptset_id' })),
    version: Type.Optional(Type.String({ description: 'a positive integer; when omitted, the live prompt' })),
  },
  { additionalProperties: Type.String({ description: 'variables.<name>=<value>: fills the declared placeholder <name>' }) },
)
export type GetPromptQuery = Static<typeof GetPromptQuerySchema>

// Versions are Postgres integers; anything larger cannot exist.
const maxVersion = 2_147_483_647

function parseVersion(raw: string | undefined): number | null {
  if (raw === undefined) return null
  const version = /^[0-9]{1,10}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(version >= 1)) throw new BadRequestError(`querystring/version: expected a positive integer, got ${JSON.stringify(raw)}`)
  return version
}

async function lookUp(db: Db, projectId: string, promptsetId: string, version: number | null): Promise<RegistryLookup> {
  const registry = await findProjectPromptset(db, projectId, promptsetId)
  if (!registry) return { kind: 'registry-not-found' }
  if (version !== null && version > maxVersion) return { kind: 'version-not-found', version }
  const prompt = version === null ? await findLivePrompt(db, registry.id) : await findPromptVersion(db, registry.id, version)
  if (!prompt) return version === null ? { kind: 'no-live' } : { kind: 'version-not-found', version }
  return { kind: 'found', view: toPromptView(registry, prompt) }
}

export interface PromptLookupRoutesOptions {
  promptCache: PromptCache
}

/** Answers from a lookup: the registry with the selected prompt, its variables filled. */
function answer(reply: FastifyReply, query: GetPromptQuery, lookup: RegistryLookup): void {
  if (lookup.kind === 'registry-not-found') throw new NotFoundError('Prompt registry not found')
  if (lookup.kind === 'no-live') throw new NotFoundError('No live prompt in this registry; pass a version')
  if (lookup.kind === 'version-not-found') throw new NotFoundError(`Prompt version ${lookup.version} not found`)
  const values = declaredValues(lookup.view, query)
  let body = lookup.view.unfilledJson
  if (values !== undefined) {
    const missing = missingValues(lookup.view, values)
    if (missing.length > 0) throw new BadRequestError(`Missing variables: ${missing.join(', ')}`)
    body = filledJson(lookup.view, values)
  }
  // Already serialised (RegistrySchema's shape, built by toPromptView): Fastify sends a string
  // with a JSON content type as it is, skipping the per-request serialisation.
  void reply.type('application/json; charset=utf-8').send(body)
}

export const promptLookupRoutes: FastifyPluginAsyncTypebox<PromptLookupRoutesOptions> = async (app, { promptCache }) => {
  app.get(
    '/api/promptset',
    {
      onRequest: requireProjectKey,
      schema: {
        summary: 'Fetch a prompt from a registry (Langtrace SDK getPromptFromRegistry)',
        description:
          'The live prompt, or the given version, with declared variables filled from variables.<name> parameters. ' +
          'Placeholders are ${name}, {{name}} and {name}. If any variables.* parameter is given, every declared variable must be.',
        tags: ['prompt registry'],
        security: [{ apiKey: [] }],
        querystring: GetPromptQuerySchema,
        response: { 200: RegistrySchema, ...errorResponses(400, 401, 404) },
      },
    },
    // Not an async function: a cached lookup is answered at once, without a promise and a turn of
    // the microtask queue; only a lookup that goes to the database returns one.
    (request, reply) => {
      const query = request.query
      const promptsetId = query.promptset_id ?? query.promptsetid
      if (promptsetId === undefined || promptsetId === '') throw new BadRequestError('querystring/promptset_id: required')
      const version = parseVersion(query.version)
      const projectId = callerProjectId(request)

      const cached = promptCache.peek(promptsetId, projectId, version)
      if (cached !== undefined) return answer(reply, query, cached)
      return promptCache.load(promptsetId, projectId, version, () => lookUp(app.db, projectId, promptsetId, version)).then((lookup) => answer(reply, query, lookup))
    },
  )
}
