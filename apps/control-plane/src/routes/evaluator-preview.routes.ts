import { type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findPromptByPromptsetName, findTraceSpans } from '@tracewell/db'
import { BadRequestError, NotFoundError } from '@tracewell/http'
import { judgeRequestOf } from '@tracewell/llm-messages'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, EvaluatorPreviewBodySchema, EvaluatorPreviewSchema, ProjectScopeQuerySchema } from '@tracewell/api-schemas'

// What a judge would be sent for one trace, before an evaluator is made (docs/api.md#preview):
// the same reading and filling the evaluator worker judges with (judgeRequestOf of
// @tracewell/llm-messages), or the reason it would skip the trace. Calls no model.

export const evaluatorPreviewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  async function templateOf(projectId: string, { prompt, promptRef }: Static<typeof EvaluatorPreviewBodySchema>): Promise<string> {
    if (prompt !== undefined && promptRef === undefined) return prompt
    if (promptRef === undefined || prompt !== undefined) throw new BadRequestError('body: give exactly one of prompt and promptRef')
    const found = await findPromptByPromptsetName(app.db, projectId, promptRef.name, promptRef.label)
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
        body: EvaluatorPreviewBodySchema,
        response: { 200: EvaluatorPreviewSchema, ...errorResponses(400, 401, 404) },
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
