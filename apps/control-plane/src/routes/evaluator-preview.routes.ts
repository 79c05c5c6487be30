import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findRegistryPrompt, findTraceSpans } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import { judgeRequestOf } from '@tracewell/llm-messages'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, LabelNameSchema, ProjectScopeQuerySchema } from '@tracewell/api-schemas'

// What a judge would be sent for one trace, before an evaluator is made (docs/api.md#preview):
// the same reading and filling the evaluator worker judges with (judgeRequestOf of
// @tracewell/llm-messages), or the reason it would skip the trace. Calls no model.

const PreviewBodySchema = Type.Object(
  {
    prompt: Type.Optional(Type.String({ minLength: 1, maxLength: 50_000, description: 'a template over {{input}}, {{output}} and {{expected_output}}' })),
    promptRef: Type.Optional(
      Type.Object(
        { name: Type.String({ minLength: 1, maxLength: 200, description: 'a prompt registry of the project, by name' }), label: LabelNameSchema },
        { additionalProperties: false, description: 'the registry version this label points at; its text is the template' },
      ),
    ),
    traceId: Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'a trace of the project, 32 hex characters' }),
  },
  { additionalProperties: false, description: 'exactly one of prompt and promptRef' },
)

const Nullable = (description: string) => Type.Union([Type.String(), Type.Null()], { description })

const PreviewSchema = Type.Object({
  input: Nullable('the trace’s input as the judge reads it (null: none)'),
  output: Nullable('the trace’s output as the judge reads it (null: none)'),
  prompt: Nullable('the template filled, as the judge would be sent it; null when the trace would be skipped'),
  skipped: Nullable('why a judge would skip the trace (never sending it); null when it would judge it'),
})

export const evaluatorPreviewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  async function templateOf(projectId: string, { prompt, promptRef }: Static<typeof PreviewBodySchema>): Promise<string> {
    if (prompt !== undefined && promptRef === undefined) return prompt
    if (promptRef === undefined || prompt !== undefined) throw new BadRequestError('body: give exactly one of prompt and promptRef')
    const found = await findRegistryPrompt(app.db, projectId, promptRef.name, promptRef.label)
    if (found === undefined) throw new BadRequestError(`body/promptRef: no prompt registry ${JSON.stringify(promptRef.name)} with a version labelled ${JSON.stringify(promptRef.label)}`)
    return found.value
  }

  app.post(
    '/api/evaluators/preview',
    {
      onRequest: authorize,
      config: { permission: 'evaluators:read' },
      schema: {
        operationId: 'previewEvaluator',
        summary: 'The judge prompt an evaluator template makes of a trace, or why the trace would be skipped (no model is called)',
        tags: ['evaluators'],
        security: [{ apiKey: [] }],
        querystring: ProjectScopeQuerySchema,
        body: PreviewBodySchema,
        response: { 200: PreviewSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const projectId = callerProjectId(request)
      const template = await templateOf(projectId, request.body)
      const spans = await app.timedQuery((db) => findTraceSpans(db, projectId, request.body.traceId.toLowerCase()))
      if (spans.length === 0) throw new NotFoundError('Trace not found')
      const judged = judgeRequestOf(template, spans)
      return { input: judged.input, output: judged.output, prompt: judged.prompt, skipped: judged.skipped }
    },
  )
}
