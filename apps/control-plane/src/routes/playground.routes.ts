import { randomBytes } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { callChat, callCost, LlmCallError, llmCallSpan, openConnection, type ChatAnswer, type ChatRequestMessage } from '@tracewell/llm-calls'
import { findLabelledPrompt, findLlmConnection, findProjectPromptset, findPromptVersion } from '@tracewell/db'
import { compileTemplate, extractVariables, fillTemplate, missingVariables, promptMessages } from '@tracewell/llm-messages'
import { noCost } from '@tracewell/llm-usage'
import { BadRequestError, ServiceUnavailableError } from '@tracewell/http'
import type { FastifyReply } from 'fastify'
import type { Outbound } from '@tracewell/outbound'
import { callerProjectId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { errorResponses, type PlaygroundRun, type PlaygroundRunBody, PlaygroundRunBodySchema, PlaygroundRunSchema, ProjectScopeQuerySchema } from '@tracewell/api-schemas'

// The playground (docs/api.md#playground): a prompt version or messages written by hand, variables
// filled, sent to a model through one of the project's LLM connections from the control plane,
// answered whole or streamed as server-sent events. Every run is a trace of the project (service
// tracewell, tracewell.playground = true), like an experiment's items. A model that refuses or
// fails is an answer too: 200 with `error` set, and the trace of the failed call.

export interface PlaygroundRoutesOptions {
  /** LLM_CONNECTION_ENCRYPTION_KEY: opens the connection's key; without it nothing can be run (503). */
  encryptionKey: Buffer | undefined
  /** EXPERIMENT_CALL_TIMEOUT_MS. */
  callTimeoutMs: number
  outbound: Outbound
}

export const playgroundRoutes: FastifyPluginAsyncTypebox<PlaygroundRoutesOptions> = async (app, options) => {
  /** The messages to send, variables filled, and the model and settings the run uses. */
  async function prepare(projectId: string, body: PlaygroundRunBody): Promise<{ messages: ChatRequestMessage[]; model: string; settings: Record<string, unknown>; attributes: Record<string, string | number> }> {
    const values = new Map(Object.entries(body.variables ?? {}))
    if (body.messages !== undefined) {
      if (body.promptsetId !== undefined) throw new BadRequestError('body: pass either messages or promptsetId, not both')
      if (body.model === undefined) throw new BadRequestError('body/model: required with messages')
      const declared = [...new Set(body.messages.flatMap((message) => extractVariables(message.content)))]
      const missing = missingVariables(compileTemplate('', declared), values)
      if (missing.length > 0) throw new BadRequestError(`body/variables: missing ${missing.join(', ')}`)
      const messages = body.messages.map((message) => ({ role: message.role, content: fillTemplate(compileTemplate(message.content, declared), values) }))
      return { messages, model: body.model, settings: body.modelSettings ?? {}, attributes: {} }
    }
    if (body.promptsetId === undefined) throw new BadRequestError('body: needs messages, or a promptsetId and version or label')
    if (body.version !== undefined && body.label !== undefined) throw new BadRequestError('body: pass either version or label, not both')
    const promptset = await findProjectPromptset(app.db, projectId, body.promptsetId)
    if (promptset === undefined) throw new BadRequestError(`body/promptsetId: no prompt registry ${JSON.stringify(body.promptsetId)} in this project`)
    const prompt = body.version !== undefined ? await findPromptVersion(app.db, promptset.id, body.version) : await findLabelledPrompt(app.db, promptset.id, body.label ?? 'production')
    if (prompt === undefined) throw new BadRequestError(body.version !== undefined ? `body/version: the registry has no version ${body.version}` : `body/label: no version of the registry is labelled ${JSON.stringify(body.label ?? 'production')}`)
    const missing = missingVariables(compileTemplate(prompt.value, prompt.variables), values)
    if (missing.length > 0) throw new BadRequestError(`body/variables: missing ${missing.join(', ')}`)
    return {
      messages: promptMessages(prompt.value, prompt.variables, values),
      model: body.model ?? prompt.model,
      settings: { ...prompt.modelSettings, ...body.modelSettings },
      attributes: { 'tracewell.prompt.promptset_id': promptset.id, 'tracewell.prompt.version': prompt.version },
    }
  }

  app.post(
    '/api/playground/runs',
    {
      onRequest: authorize,
      config: { permission: 'playground:run' },
      schema: {
        operationId: 'runPlayground',
        summary: 'Run a prompt version or messages against a model of an LLM connection; the run is a trace',
        description: 'With stream: true the answer is text/event-stream: {type:"text", text} events, then one {type:"done", …} with the run as in the 200 body.',
        tags: ['playground'],
        security: [{ apiKey: [] }],
        querystring: ProjectScopeQuerySchema,
        body: PlaygroundRunBodySchema,
        produces: ['application/json', 'text/event-stream'],
        response: { 200: PlaygroundRunSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const key = options.encryptionKey
      if (key === undefined) throw new ServiceUnavailableError('The playground needs LLM_CONNECTION_ENCRYPTION_KEY set on the server, to open the connections’ keys', 3600)
      const projectId = callerProjectId(request)
      const body = request.body
      if ((await findLlmConnection(app.db, projectId, body.connectionId)) === undefined) throw new BadRequestError(`body/connectionId: no LLM connection ${JSON.stringify(body.connectionId)} in this project`)
      const prepared = await prepare(projectId, body)
      const connection = await openConnection(app.db, body.connectionId, key).catch((error: unknown) => {
        throw new BadRequestError(`body/connectionId: ${(error as Error).message}`)
      })
      const traceId = randomBytes(16).toString('hex')
      const spanId = randomBytes(8).toString('hex')
      const startedAtMs = Date.now()
      if (body.stream) startEventStream(reply)
      let answer: ChatAnswer | undefined
      let error: string | undefined
      try {
        answer = await callChat({
          baseUrl: connection.baseUrl,
          apiKey: connection.apiKey,
          model: prepared.model,
          messages: prepared.messages,
          settings: prepared.settings,
          timeoutMs: options.callTimeoutMs,
          outbound: options.outbound,
          ...(body.stream ? { onText: (text: string) => sendEvent(reply, { type: 'text', text }) } : {}),
        })
      } catch (failure) {
        if (!(failure instanceof LlmCallError)) throw failure
        error = failure.message
        // What the model's endpoint said stays here: the caller gets Tracewell's words and its status.
        request.log.warn({ connectionId: body.connectionId, error: failure.message, detail: failure.detail }, 'playground run failed')
      }
      const cost = answer === undefined ? noCost : await callCost(app.db, projectId, answer, new Date(startedAtMs))
      // The write path (its COPY encoder, pg-copy-streams) loads with the first run, not with the
      // control plane: only the playground stores spans here (docs/benchmarks.md#at-rest).
      const { storeSpans } = await import('@tracewell/write-path')
      await storeSpans(app.db, [
        llmCallSpan({
          projectId,
          traceId,
          spanId,
          origin: 'playground',
          name: 'playground',
          startedAtMs,
          requestedModel: prepared.model,
          messages: prepared.messages,
          settings: prepared.settings,
          ...(answer === undefined ? {} : { answer }),
          ...(error === undefined ? {} : { error }),
          cost,
          inputText: prepared.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '',
          attributes: { 'tracewell.playground': 'true', ...prepared.attributes },
        }),
      ])
      const run: PlaygroundRun = {
        traceId,
        messages: prepared.messages as PlaygroundRun['messages'],
        output: answer?.text ?? '',
        toolCalls: answer?.toolCalls ?? [],
        error: error ?? null,
        model: answer?.model ?? prepared.model,
        inputTokens: answer?.inputTokens ?? null,
        outputTokens: answer?.outputTokens ?? null,
        costUsd: cost.totalCostUsd,
        latencyMs: answer?.latencyMs ?? Date.now() - startedAtMs,
        firstTokenMs: answer?.firstTokenMs ?? null,
      }
      if (!body.stream) return run
      sendEvent(reply, { type: 'done', ...run })
      reply.raw.end()
      return reply
    },
  )
}

/** Takes over the response for server-sent events (the route's JSON serialisation is bypassed). */
function startEventStream(reply: FastifyReply): void {
  reply.hijack()
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', connection: 'keep-alive' })
}

function sendEvent(reply: FastifyReply, event: Record<string, unknown>): void {
  reply.raw.write(`data: ${JSON.stringify(event)}\n\n`)
}
