import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findLabelledPrompt, findLivePrompt, findProjectPromptset, findPromptVersion, type Db, type PromptDto } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import type { FastifyReply } from 'fastify'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import type { PromptCache, PromptSelector, PromptsetLookup } from '../prompt-cache.ts'
import { declaredValues, filledJson, missingValues, toPromptView } from '../prompt-view.ts'
import { errorResponses, LabelNameSchema, PromptsetWithPromptsSchema } from '@tracewell/api-schemas'

// GET /api/promptset, what the Langtrace SDKs call: the TypeScript SDK sends
// `promptset_id`, `version` and `variables.<name>` through URLSearchParams, the Python SDK through
// urlencode; both encode a space as `+`. Fastify's query parser (fast-querystring) decodes keys
// and values as a form would (`+` is a space, %XX
// escapes), which a test pins down.

export const GetPromptQuerySchema = Type.Object(
  {
    promptset_id: Type.Optional(Type.String({ maxLength: 200, description: 'the registry id (what the SDKs send)' })),
    promptsetid: Type.Optional(Type.String({ maxLength: 200, description: 'alias of promptset_id' })),
    version: Type.Optional(Type.String({ description: 'a positive integer; with neither version nor label, the live (production) prompt' })),
    label: Type.Optional({ ...LabelNameSchema, description: 'the version this label points at (not together with version)' }),
    project_id: Type.Optional(Type.String({ maxLength: 64, description: 'the project, with a team key or a signed-in session (the console’s preview); a project key implies its own' })),
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

/** The version, the label, or null for the default (the production label); not both. */
function parseSelector(query: GetPromptQuery): PromptSelector {
  const version = parseVersion(query.version)
  if (query.label === undefined) return version
  if (version !== null) throw new BadRequestError('querystring: pass either version or label, not both')
  return query.label
}

async function lookUp(db: Db, projectId: string, promptsetId: string, selector: PromptSelector): Promise<PromptsetLookup> {
  const promptset = await findProjectPromptset(db, projectId, promptsetId)
  if (!promptset) return { kind: 'promptset-not-found' }
  let prompt: PromptDto | undefined
  if (selector === null) {
    prompt = await findLivePrompt(db, promptset.id)
    if (!prompt) return { kind: 'no-live' }
  } else if (typeof selector === 'string') {
    prompt = await findLabelledPrompt(db, promptset.id, selector)
    if (!prompt) return { kind: 'label-not-found', label: selector }
  } else {
    if (selector <= maxVersion) prompt = await findPromptVersion(db, promptset.id, selector)
    if (!prompt) return { kind: 'version-not-found', version: selector }
  }
  return { kind: 'found', view: toPromptView(promptset, prompt) }
}

export interface PromptLookupRoutesOptions {
  promptCache: PromptCache
}

/** Answers from a lookup: the promptset with the selected prompt, its variables filled. */
function answer(reply: FastifyReply, query: GetPromptQuery, lookup: PromptsetLookup): void {
  if (lookup.kind === 'promptset-not-found') throw new NotFoundError('Prompt registry not found')
  if (lookup.kind === 'no-live') throw new NotFoundError('No live prompt in this registry; pass a version')
  if (lookup.kind === 'version-not-found') throw new NotFoundError(`Prompt version ${lookup.version} not found`)
  if (lookup.kind === 'label-not-found') throw new NotFoundError(`Prompt label ${lookup.label} not found`)
  const values = declaredValues(lookup.view, query)
  let body = lookup.view.unfilledJson
  if (values !== undefined) {
    const missing = missingValues(lookup.view, values)
    if (missing.length > 0) throw new BadRequestError(`Missing variables: ${missing.join(', ')}`)
    body = filledJson(lookup.view, values)
  }
  // Already serialised (PromptsetWithPromptsSchema's shape, built by toPromptView): Fastify sends a string
  // with a JSON content type as it is, skipping the per-request serialisation.
  void reply.type('application/json; charset=utf-8').send(body)
}

export const promptLookupRoutes: FastifyPluginAsyncTypebox<PromptLookupRoutesOptions> = async (app, { promptCache }) => {
  app.get(
    '/api/promptset',
    {
      onRequest: authorize,
      config: { permission: 'prompts:read' },
      schema: {
        operationId: 'getPrompt',
        summary: 'Fetch a prompt from a registry (Langtrace SDK getPromptFromRegistry)',
        description:
          'The live prompt (the version the production label points at), or the given version or label, with declared variables ' +
          'filled from variables.<name> parameters. ' +
          'Placeholders are ${name}, {{name}} and {name}. If any variables.* parameter is given, every declared variable must be.',
        tags: ['prompt registry'],
        security: [{ apiKey: [] }],
        querystring: GetPromptQuerySchema,
        response: { 200: PromptsetWithPromptsSchema, ...errorResponses(400, 401, 404) },
      },
    },
    // Not an async function: a cached lookup is answered at once, without a promise and a turn of
    // the microtask queue; only a lookup that goes to the database returns one.
    (request, reply) => {
      const query = request.query
      const promptsetId = query.promptset_id ?? query.promptsetid
      if (promptsetId === undefined || promptsetId === '') throw new BadRequestError('querystring/promptset_id: required')
      const selector = parseSelector(query)
      const projectId = callerProjectId(request)

      const cached = promptCache.peek(promptsetId, projectId, selector)
      if (cached !== undefined) return answer(reply, query, cached)
      return promptCache.load(promptsetId, projectId, selector, () => lookUp(app.db, projectId, promptsetId, selector)).then((lookup) => answer(reply, query, lookup))
    },
  )
}
