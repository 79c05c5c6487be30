import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { listScores, storedSpanPairs, type Executor, type ScoreDto } from '@tracewell/db'
import { BadRequestError } from '@tracewell/http'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, IsoDateSchema } from '@tracewell/api-schemas'
import { parseJsonKeepingBigIntegers } from '../scores/big-integer-json.ts'
import { jsonBodyError } from './json-body-error.ts'
import { idInForm, spanIdReadings, traceIdReadings, type IdForm, type IdReading } from '../scores/langtrace-ids.ts'
import { recordScore } from '../scores/record-score.ts'

// Langtrace's user-feedback endpoint, as both SDKs call it: `sendUserFeedback` (TypeScript) and
// `SendUserFeedback().evaluate` (Python) GET /api/evaluation?spanId=… and read evaluations[0],
// then POST (none yet) or PUT (one exists) { userId, userScore, spanId, traceId } with the project
// key. A feedback is the score `user_feedback` on that span and trace (docs/api.md#langtrace-user-feedback),
// one per span: its id is derived from the span, so POST and PUT both create or replace it.

export const userFeedbackScoreName = 'user_feedback'
const feedbackScoreId = (spanHex: string) => `${userFeedbackScoreName}:${spanHex}`

const IdSchema = Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 1 })], {
  description: 'hex (TypeScript SDK) or a decimal integer (Python SDK’s root-span helper)',
})

const EvaluationBodySchema = Type.Object({
  userId: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()], { description: 'who gave the feedback: the score’s author' })),
  userScore: Type.Number({ description: 'the score’s value (the SDKs send 1 for 👍, -1 for 👎)' }),
  spanId: IdSchema,
  traceId: IdSchema,
})
type EvaluationBody = Static<typeof EvaluationBodySchema>

const EvaluationQuerySchema = Type.Object({
  spanId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'the span (the Python SDK sends it here too)' })),
  project_id: Type.Optional(Type.String({ description: 'the project, with a team key' })),
})

/** What Langtrace answers, and the SDKs type as LangTraceEvaluation. */
const EvaluationSchema = Type.Object({
  id: Type.String(),
  spanId: Type.String({ description: 'in the form it was asked with' }),
  traceId: Type.String(),
  userId: Type.Union([Type.String(), Type.Null()]),
  userScore: Type.Number(),
  ltUserId: Type.Union([Type.String(), Type.Null()]),
  ltUserScore: Type.Number(),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})
type Evaluation = Static<typeof EvaluationSchema>

function toEvaluation(score: ScoreDto, form: IdForm): Evaluation {
  const userScore = score.numericValue ?? 0
  return {
    id: score.id,
    spanId: idInForm(score.spanId as string, form),
    traceId: idInForm(score.traceId as string, form),
    userId: score.author,
    userScore,
    ltUserId: score.author,
    ltUserScore: userScore,
    createdAt: score.createdAt,
    updatedAt: score.updatedAt,
  }
}

const idText = (id: string | number): string => (typeof id === 'number' ? String(id) : id)

/**
 * Which span the body names. When both ids read one way only, that is it. A 16- or 32-digit id
 * reads both ways: the pair already stored as a span wins, else the form of the other id, else
 * hex (what the TypeScript SDK sends).
 */
async function feedbackSpan(db: Executor, projectId: string, body: EvaluationBody): Promise<{ traceHex: string; spanHex: string; form: IdForm }> {
  const traces = traceIdReadings(idText(body.traceId), 'body/traceId')
  const spans = spanIdReadings(idText(body.spanId), 'body/spanId')
  const pairs: Array<{ trace: IdReading; span: IdReading }> = []
  for (const trace of traces) for (const span of spans) if (trace.form === span.form) pairs.push({ trace, span })
  if (pairs.length === 0) throw new BadRequestError('body/spanId: written in another form than body/traceId (both hex, or both decimal)')
  let chosen = pairs[0] as { trace: IdReading; span: IdReading }
  if (pairs.length > 1) {
    const stored = await storedSpanPairs(db, projectId, pairs.map(({ trace, span }) => ({ traceId: trace.hex, spanId: span.hex })))
    chosen = pairs.find(({ trace, span }) => stored.some((s) => s.traceId === trace.hex && s.spanId === span.hex)) ?? chosen
  }
  return { traceHex: chosen.trace.hex, spanHex: chosen.span.hex, form: chosen.span.form }
}

/** GET, POST and PUT /api/evaluation: Langtrace user feedback as `user_feedback` scores. */
export const langtraceEvaluationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonKeepingBigIntegers(body as string))
    } catch (error) {
      done(jsonBodyError(body as string, error), undefined)
    }
  })

  app.get(
    '/api/evaluation',
    {
      onRequest: authorize,
      config: { permission: 'scores:read' },
      schema: {
        operationId: 'getLangtraceEvaluations',
        summary: 'Langtrace SDKs: the user feedback on a span',
        tags: ['scores'],
        security: [{ apiKey: [] }],
        querystring: EvaluationQuerySchema,
        response: { 200: Type.Object({ evaluations: Type.Array(EvaluationSchema) }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const raw = request.query.spanId
      if (raw === undefined) throw new BadRequestError('querystring/spanId: required')
      const readings = spanIdReadings(raw, 'querystring/spanId')
      const { scores } = await listScores(app.db, {
        projectId: callerProjectId(request),
        limit: readings.length,
        name: userFeedbackScoreName,
        spanIds: readings.map((reading) => reading.hex),
      })
      return {
        evaluations: scores
          .filter((score) => score.id === feedbackScoreId(score.spanId as string))
          .map((score) => toEvaluation(score, readings.find((reading) => reading.hex === score.spanId)?.form ?? 'hex')),
      }
    },
  )

  for (const method of ['POST', 'PUT'] as const) {
    app.route({
      method,
      url: '/api/evaluation',
      onRequest: authorize,
      config: { permission: 'feedback:write' },
      schema: {
        operationId: method === 'POST' ? 'createLangtraceEvaluation' : 'updateLangtraceEvaluation',
        summary: `Langtrace SDKs: ${method === 'POST' ? 'give' : 'change'} a user’s feedback on a span (both create or replace it)`,
        tags: ['scores'],
        security: [{ apiKey: [] }],
        querystring: EvaluationQuerySchema,
        body: EvaluationBodySchema,
        response: { 200: Type.Object({ evaluation: EvaluationSchema }), 201: Type.Object({ evaluation: EvaluationSchema }), ...errorResponses(400, 401, 404) },
      },
      handler: async (request, reply) => {
        const projectId = callerProjectId(request)
        const body = request.body
        if (!Number.isFinite(body.userScore)) throw new BadRequestError('body/userScore: expected a number')
        const { traceHex, spanHex, form } = await feedbackSpan(app.db, projectId, body)
        const { score, created } = await recordScore(
          app.db,
          {
            projectId,
            id: feedbackScoreId(spanHex),
            traceId: traceHex,
            spanId: spanHex,
            sessionId: null,
            name: userFeedbackScoreName,
            value: body.userScore,
            comment: null,
            source: 'api',
            author: body.userId ?? null,
          },
          'body/userScore',
        )
        return reply.code(created ? 201 : 200).send({ evaluation: toEvaluation(score, form) })
      },
    })
  }
}
