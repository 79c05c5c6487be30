import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { deleteProjectMaskingRules, findTeamProject, getProjectMaskingRules, upsertProjectMaskingRules } from '@tracewell/db'
import { compileRules, Masker, MaskingRuleError, MaskingRulesSchema, type MaskingRule } from '@tracewell/masking'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import type { FastifyRequest } from 'fastify'
import { authorize } from '../accounts/authorize.ts'
import { callerTeamId } from '../auth.ts'
import { errorResponses, ProjectParamsSchema } from '@tracewell/api-schemas'

export const ProjectMaskingSchema = Type.Object({
  projectId: Type.String(),
  source: Type.Union([Type.Literal('project'), Type.Literal('default')], { description: 'project: its own rules apply; default: MASKING_DEFAULT_RULES do' }),
  rules: MaskingRulesSchema,
  default: Type.Array(MaskingRulesSchema.items, { description: 'MASKING_DEFAULT_RULES, what a project without rules of its own gets' }),
})
export type ProjectMasking = Static<typeof ProjectMaskingSchema>

export const MaskingRulesBodySchema = Type.Object({ rules: MaskingRulesSchema }, { additionalProperties: false })

export const MaskingTestBodySchema = Type.Object(
  {
    rules: Type.Optional(Type.Array(MaskingRulesSchema.items, { maxItems: MaskingRulesSchema.maxItems, description: 'rules to try; absent: the rules that apply to the project now' })),
    text: Type.String({ maxLength: 100_000, description: 'the text to mask, as an attribute value would be (JSON in it is masked value by value)' }),
  },
  { additionalProperties: false },
)

export const MaskingTestResultSchema = Type.Object({
  masked: Type.String({ description: 'the text as ingest would store it' }),
  changed: Type.Boolean({ description: 'whether any rule matched' }),
})

export interface MaskingRoutesOptions {
  /** MASKING_DEFAULT_RULES (defaultMaskingRules); none when absent. */
  defaultRules: readonly MaskingRule[]
}

/** The rules compiled, or the 400 naming the rule that cannot run (`body/rules/2/pattern: …`). */
function compiledOrBadRequest(rules: readonly MaskingRule[]): Masker {
  try {
    return new Masker(compileRules(rules, 'body/rules'))
  } catch (error) {
    if (error instanceof MaskingRuleError) throw new BadRequestError(error.message)
    throw error
  }
}

/**
 * A project's masking rules (team key or console session): GET what applies, PUT its own, DELETE
 * them to go back to the default, and POST …/test to see what rules make of a text. Ingest
 * applies a change within MASKING_RULES_REFRESH_MS (at most 5 s).
 */
export const maskingRoutes: FastifyPluginAsyncTypebox<MaskingRoutesOptions> = async (app, options) => {
  const defaults = [...options.defaultRules]
  async function ownedProjectId(request: FastifyRequest, projectId: string): Promise<string> {
    const project = await findTeamProject(app.db, callerTeamId(request), projectId)
    if (!project) throw new NotFoundError('Project not found')
    return project.id
  }
  const answer = (projectId: string, own: { rules: unknown[] } | undefined): ProjectMasking =>
    own ? { projectId, source: 'project', rules: own.rules as MaskingRule[], default: defaults } : { projectId, source: 'default', rules: defaults, default: defaults }

  const path = '/api/projects/:projectId/masking'
  const common = { tags: ['masking'], security: [{ apiKey: [] }], params: ProjectParamsSchema }

  app.get(
    path,
    {
      onRequest: authorize,
      config: { permission: 'settings:read' },
      schema: {
        operationId: 'getMaskingRules',
        summary: 'Read a project’s masking rules',
        description: 'The rules that apply to the project: its own (source "project"), or MASKING_DEFAULT_RULES (source "default").',
        ...common,
        response: { 200: ProjectMaskingSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = await ownedProjectId(request, request.params.projectId)
      return answer(projectId, await getProjectMaskingRules(app.db, projectId))
    },
  )

  app.put(
    path,
    {
      onRequest: authorize,
      config: { permission: 'settings:write' },
      schema: {
        operationId: 'setMaskingRules',
        summary: 'Set a project’s masking rules',
        description:
          'Replaces the default for this project; `{"rules": []}` masks nothing even where a default is set. A regex pattern that RE2 cannot run in linear time (backreferences, lookaround) or that does not parse is a 400 naming it. Ingest applies the change within MASKING_RULES_REFRESH_MS.',
        ...common,
        body: MaskingRulesBodySchema,
        response: { 200: ProjectMaskingSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = await ownedProjectId(request, request.params.projectId)
      compiledOrBadRequest(request.body.rules)
      return answer(projectId, await upsertProjectMaskingRules(app.db, projectId, request.body.rules))
    },
  )

  app.delete(
    path,
    {
      onRequest: authorize,
      config: { permission: 'settings:write' },
      schema: {
        operationId: 'deleteMaskingRules',
        summary: 'Remove a project’s own masking rules',
        description: 'MASKING_DEFAULT_RULES apply again. 204 whether or not the project had rules of its own.',
        ...common,
        response: { 204: Type.Null({ description: 'the default applies' }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      await deleteProjectMaskingRules(app.db, await ownedProjectId(request, request.params.projectId))
      return reply.code(204).send(null)
    },
  )

  app.post(
    `${path}/test`,
    {
      onRequest: authorize,
      config: { permission: 'settings:read' },
      schema: {
        operationId: 'testMaskingRules',
        summary: 'Mask a text with a project’s rules, or with rules to try',
        description: 'Runs the engine ingest runs: the text comes back as a string attribute value holding it would be stored. Nothing is saved.',
        ...common,
        body: MaskingTestBodySchema,
        response: { 200: MaskingTestResultSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = await ownedProjectId(request, request.params.projectId)
      const rules = request.body.rules ?? answer(projectId, await getProjectMaskingRules(app.db, projectId)).rules
      const masked = compiledOrBadRequest(rules).maskText(request.body.text)
      return { masked, changed: masked !== request.body.text }
    },
  )
}
