import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { summaryBacklog } from '@tracewell/db'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, ProjectScopeQuerySchema, SummariesStatusSchema } from '@tracewell/api-schemas'

/**
 * How far the summaries (the trace list, sessions, usage) are behind the stored spans: the
 * writers' summariser folds new spans in within seconds, and the console says so while it has not.
 */
export const summariesStatusRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/summaries/status',
    {
      onRequest: authorize,
      config: { permission: 'traces:read' },
      schema: {
        operationId: 'getSummariesStatus',
        summary: 'How far the trace list, sessions and usage are behind the stored spans',
        tags: ['traces'],
        security: [{ apiKey: [] }],
        querystring: ProjectScopeQuerySchema,
        response: { 200: SummariesStatusSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async () => {
      const backlog = await summaryBacklog(app.db)
      return { pendingTraces: backlog.traces, lagSeconds: backlog.lagSeconds }
    },
  )
}
