import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

// A small OpenAI-compatible server for the instrumentation tests: POST /v1/chat/completions,
// plain or streamed (server-sent events, as api.openai.com sends them), with a fixed answer and
// fixed usage so every stored figure has an exact expected value. It speaks Anthropic's Messages
// API too (POST /v1/messages, plain or streamed as api.anthropic.com sends it), with the same
// answer and usage. For the experiment tests it
// also refuses when a system message tells it to be unhelpful (a worse prompt), and judges when
// asked for a JSON response format: score 1 when the judged answer holds the expected one.

/** What every answer reports, as OpenAI names it. */
export const fakeUsage = { prompt_tokens: 42, completion_tokens: 8, total_tokens: 50, prompt_tokens_details: { cached_tokens: 0 } } as const
/** The dated model OpenAI answers with for the alias a client asks for. */
export const answeredModel = (requested: string): string => (requested === 'gpt-4o-mini' ? 'gpt-4o-mini-2024-07-18' : requested)
export const fakeAnswer = 'Refunds take five business days.'
/** The answer to a conversation whose system message says "Be unhelpful". */
export const fakeRefusal = 'I cannot help with that.'

type ChatBody = { model: string; stream?: boolean; stream_options?: { include_usage?: boolean }; response_format?: unknown; messages?: Array<{ role: string; content: unknown }> }

/** The answer's text: a judgment when a response format is asked for, else the refusal or the fixed answer. */
function answerOf(body: ChatBody): string {
  const messages = body.messages ?? []
  const text = (role: string) => messages.filter((message) => message.role === role).map((message) => String(message.content))
  if (body.response_format !== undefined) {
    const prompt = text('user').at(-1) ?? ''
    const expected = /Expected: (.*)/.exec(prompt)?.[1]?.trim() ?? ''
    const answer = /Answer: (.*)/s.exec(prompt)?.[1] ?? ''
    const right = expected !== '' && answer.includes(expected)
    return JSON.stringify({ score: right ? 1 : 0, reasoning: right ? 'the answer says what was expected' : 'the answer does not say what was expected' })
  }
  return text('system').some((content) => content.includes('Be unhelpful')) ? fakeRefusal : fakeAnswer
}

export interface FakeOpenAi {
  /** The base URL an OpenAI client is given (ends in /v1). */
  baseURL: string
  /** Bodies of the chat completion requests received, parsed. */
  requests: Array<Record<string, unknown>>
  close(): Promise<void>
}

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const requests: Array<Record<string, unknown>> = []
  const server: Server = createServer((request, response) => {
    void answer(request, response, requests).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: String(error) } }))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** The dated model Anthropic answers with for the alias a client asks for. */
export const answeredClaude = (requested: string): string => (requested === 'claude-3-5-haiku-latest' ? 'claude-3-5-haiku-20241022' : requested)

async function answer(request: IncomingMessage, response: ServerResponse, requests: Array<Record<string, unknown>>): Promise<void> {
  if (request.method === 'POST' && request.url === '/v1/messages') return answerAnthropic(request, response, requests)
  if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
    response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${request.method} ${request.url}` } }))
    return
  }
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatBody
  requests.push(body)
  const content = answerOf(body)
  const id = `chatcmpl-${requests.length}`
  const created = 1_795_316_906
  const model = answeredModel(body.model)
  if (!body.stream) {
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null }],
        usage: fakeUsage,
      }),
    )
    return
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  const send = (data: unknown) => response.write(`data: ${JSON.stringify(data)}\n\n`)
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] })
  send(chunk({ role: 'assistant', content: '' }, null))
  for (const word of content.split(/(?<= )/)) send(chunk({ content: word }, null))
  send(chunk({}, 'stop'))
  // As OpenAI does: the usage comes in a last chunk with no choices, only when asked for.
  if (body.stream_options?.include_usage) send({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: fakeUsage })
  response.end('data: [DONE]\n\n')
}

/** Anthropic's Messages API: the fixed answer, its usage as Anthropic names it, plain or as its event stream. */
async function answerAnthropic(request: IncomingMessage, response: ServerResponse, requests: Array<Record<string, unknown>>): Promise<void> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; stream?: boolean }
  requests.push(body)
  const id = `msg_${requests.length}`
  const model = answeredClaude(body.model)
  const usage = { input_tokens: fakeUsage.prompt_tokens, output_tokens: fakeUsage.completion_tokens }
  if (!body.stream) {
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ id, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: fakeAnswer }], stop_reason: 'end_turn', stop_sequence: null, usage }),
    )
    return
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  const send = (event: string, data: Record<string, unknown>) => response.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`)
  send('message_start', { message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input_tokens, output_tokens: 1 } } })
  send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })
  for (const word of fakeAnswer.split(/(?<= )/)) send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: word } })
  send('content_block_stop', { index: 0 })
  send('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } })
  send('message_stop', {})
  response.end()
}
