import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { listLabelMoves, listPromptLabels, moveLabel, productionLabel, type LabelMoveResult } from '@tracewell/db'
import { BadRequestError, ConflictError, NotFoundError } from '@tracewell/http'
import { callerActor } from '../auth.ts'
import { authorize, chooseAccess } from '../accounts/authorize.ts'
import { ownedPromptset } from '../owned-promptset.ts'
import type { PromptCache } from '../prompt-cache.ts'
import { timeWindow } from './query-bounds.ts'
import { errorResponses, IdSchema, LabelHistoryQuerySchema, LabelHistorySchema, MoveLabelBodySchema, MoveLabelResponseSchema, ProjectScopeQuerySchema, PromptLabelListSchema, PromptLabelParamsSchema } from '@tracewell/api-schemas'

// Prompt labels: named pointers at versions of a promptset, moved in one call; `production` is the
// version GET /api/promptset serves by default (the "live" one). Authorised like the rest of the
// promptset, with the project key.

const describeVersion = (version: number | null) => (version === null ? 'not set' : `at version ${version}`)

function conflictMessage(label: string, current: number | null, expected: number | null): string {
  return `Prompt label ${label} is ${describeVersion(current)}; expected it ${describeVersion(expected)}`
}

const maxMoveId = 2n ** 63n - 1n

/** Moving or removing `production` changes what the SDKs are served: it needs more than another label. */
const productionNeedsMore = chooseAccess(['prompts:write', 'prompts:label-production'], (request) =>
  (request.params as { label?: unknown }).label === productionLabel ? 'prompts:label-production' : 'prompts:write',
)

/** The history's cursor is the last move's id: moves of a promptset are numbered in the order they happened. */
function parseCursor(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined
  if (!/^[1-9][0-9]{0,18}$/.test(raw) || BigInt(raw) > maxMoveId) throw new BadRequestError('querystring/cursor: not a nextCursor returned by this API')
  return raw
}

export interface PromptLabelRoutesOptions {
  /** Dropped for a promptset whenever one of its labels moves here; other instances follow within its TTL. */
  promptCache: PromptCache
}

export const promptLabelRoutes: FastifyPluginAsyncTypebox<PromptLabelRoutesOptions> = async (app, { promptCache }) => {
  const tags = ['prompt registry']
  const security = [{ apiKey: [] }]

  /** Applies a move; anything but a move or a no-op is the caller's error. */
  function applied(result: LabelMoveResult, label: string, version: number | null, expected: number | null | undefined) {
    if (result.kind === 'version-not-found') throw new NotFoundError(`Prompt version ${version} not found`)
    if (result.kind === 'conflict') throw new ConflictError(conflictMessage(label, result.currentVersion, expected ?? null))
    return result
  }

  app.get(
    '/api/promptsets/:promptsetId/labels',
    {
      onRequest: authorize,
      config: { permission: 'prompts:read' },
      schema: {
        operationId: 'listPromptLabels',
        querystring: ProjectScopeQuerySchema,
        summary: 'A registry’s labels and the versions they point at',
        tags,
        security,
        params: Type.Object({ promptsetId: IdSchema }),
        response: { 200: PromptLabelListSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const promptset = await ownedPromptset(app.db, request, request.params.promptsetId)
      return { labels: await listPromptLabels(app.db, promptset.id) }
    },
  )

  app.put(
    '/api/promptsets/:promptsetId/labels/:label',
    {
      onRequest: authorize,
      config: { permission: productionNeedsMore },
      schema: {
        operationId: 'movePromptLabel',
        querystring: ProjectScopeQuerySchema,
        summary: 'Point a label at a version (creating the label if needed)',
        description:
          'One call moves the label; the previous version is in the response and in the label history, so a rollback is a move back to it. ' +
          'Moves of one registry apply one after another; with expectedVersion, of two concurrent moves from the same version exactly one succeeds. ' +
          'Moving production changes what GET /api/promptset serves without a version or label, at once on this instance and within 5 s on the others.',
        tags,
        security,
        params: PromptLabelParamsSchema,
        body: MoveLabelBodySchema,
        response: { 200: MoveLabelResponseSchema, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      const promptset = await ownedPromptset(app.db, request, request.params.promptsetId)
      const { label } = request.params
      const { version, expectedVersion } = request.body
      const result = applied(
        await moveLabel(app.db, { promptsetId: promptset.id, label, version, expectedVersion, movedBy: callerActor(request) }),
        label,
        version,
        expectedVersion,
      )
      if (result.kind === 'moved') promptCache.invalidate(promptset.id)
      const moved = result.kind === 'moved'
      // A move to a version always leaves the label in place.
      const current = result.label as NonNullable<typeof result.label>
      return { label: current, previousVersion: moved ? result.previousVersion : current.version, moved }
    },
  )

  app.delete(
    '/api/promptsets/:promptsetId/labels/:label',
    {
      onRequest: authorize,
      config: { permission: productionNeedsMore },
      schema: {
        operationId: 'removePromptLabel',
        querystring: ProjectScopeQuerySchema,
        summary: 'Remove a label',
        description:
          'Recorded in the label history. Removing production leaves the registry with no live version: GET /api/promptset without ' +
          'version or label then answers 404 until production is set again (as PUT /live with null does).',
        tags,
        security,
        params: PromptLabelParamsSchema,
        response: { 204: Type.Null({ description: 'removed' }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const promptset = await ownedPromptset(app.db, request, request.params.promptsetId)
      const { label } = request.params
      const result = applied(await moveLabel(app.db, { promptsetId: promptset.id, label, version: null, movedBy: callerActor(request) }), label, null, undefined)
      if (result.kind === 'unchanged') throw new NotFoundError(`Prompt label ${label} not found`)
      promptCache.invalidate(promptset.id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/promptsets/:promptsetId/label-history',
    {
      onRequest: authorize,
      config: { permission: 'prompts:read' },
      schema: {
        operationId: 'listPromptLabelHistory',
        summary: 'Every move of the registry’s labels, newest first: who (key prefix), when, from which version to which',
        tags,
        security,
        params: Type.Object({ promptsetId: IdSchema }),
        querystring: LabelHistoryQuerySchema,
        response: { 200: LabelHistorySchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const promptset = await ownedPromptset(app.db, request, request.params.promptsetId)
      const { label, limit, cursor } = request.query
      const page = await listLabelMoves(app.db, { promptsetId: promptset.id, label, ...timeWindow(request.query), limit, before: parseCursor(cursor) })
      return { moves: page.moves, nextCursor: page.next }
    },
  )
}
