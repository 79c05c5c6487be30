import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

// An OpenAI-compatible endpoint that is both the model under test and the judge, for the
// experiment tests. As the model: with a system message asking for "the city only" it answers the
// capital of the country the user names, else something vague; it answers after a short delay and
// counts how many of its calls run at once; the model `no-streaming` refuses to stream. As the judge (asked for a JSON response format): score
// 1 when the answer names the expected city, else 0.

export interface ModelRequest {
  authorization: string | undefined
  body: { model: string; temperature?: number; max_tokens?: number; stream?: boolean; response_format?: { type: string }; messages: Array<{ role: string; content: string }> }
}

export interface FakeModels {
  url: string
  requests: ModelRequest[]
  /** The most model (not judge) calls seen running at once. */
  maxInFlight: number
  close(): void
}

export const modelUsage = { prompt_tokens: 42, completion_tokens: 8, total_tokens: 50 }
export const judgeUsage = { prompt_tokens: 120, completion_tokens: 20, total_tokens: 140 }
export const apiKey = 'sk-models-secret-0123456789'

const capitals: Record<string, string> = { France: 'Paris', Germany: 'Berlin', Italy: 'Rome', Spain: 'Madrid', Japan: 'Tokyo', Peru: 'Lima' }
const letters = (text: string) => text.toLowerCase().replace(/[^a-z]/g, '')

export function startFakeModels(delayMs = 80): Promise<FakeModels> {
  const requests: ModelRequest[] = []
  let inFlight = 0
  const state = { maxInFlight: 0 }
  const server: Server = createServer(async (request: IncomingMessage, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ModelRequest['body']
    requests.push({ authorization: request.headers.authorization, body })
    const send = (status: number, payload: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload))
    if (request.url !== '/v1/chat/completions' || request.method !== 'POST') return send(404, { error: { message: `no route ${request.url}` } })
    if (request.headers.authorization !== `Bearer ${apiKey}`) return send(401, { error: { message: 'Incorrect API key provided' } })
    const user = body.messages.filter((message) => message.role === 'user').at(-1)?.content ?? ''
    const completion = (content: string, usage: object, model: string) => ({
      id: `chatcmpl-${randomUUID()}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content, refusal: null } }],
      usage,
    })
    if (body.response_format !== undefined) {
      const expected = /Expected: (.*)/.exec(user)?.[1] ?? ''
      const answer = /Answer: (.*)/s.exec(user)?.[1] ?? ''
      const right = expected !== '' && letters(answer).includes(letters(expected))
      return send(200, completion(JSON.stringify({ score: right ? 1 : 0, reasoning: right ? 'names the expected city' : 'does not name the expected city' }), judgeUsage, 'gpt-4o-mini-2024-07-18'))
    }
    inFlight++
    state.maxInFlight = Math.max(state.maxInFlight, inFlight)
    await new Promise((resolve) => setTimeout(resolve, delayMs))
    inFlight--
    // A model behind an endpoint that does not stream, to test the fallback to a whole answer.
    if (body.stream && body.model === 'no-streaming') return send(400, { error: { message: 'stream is not supported for this model' } })
    const wantsCity = body.messages.some((message) => message.role === 'system' && message.content.includes('city only'))
    const country = Object.keys(capitals).find((name) => user.includes(name))
    const content = wantsCity && country !== undefined ? `${capitals[country]}.` : 'It is a large and famous city.'
    if (!body.stream) return send(200, completion(content, modelUsage, body.model === 'gpt-4o-mini' ? 'gpt-4o-mini-2024-07-18' : body.model))
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    const chunk = (delta: object, finish: string | null) => ({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, delta, finish_reason: finish }] })
    for (const word of content.split(/(?<= )/)) response.write(`data: ${JSON.stringify(chunk({ content: word }, null))}\n\n`)
    response.write(`data: ${JSON.stringify(chunk({}, 'stop'))}\n\n`)
    response.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'gpt-4o-mini-2024-07-18', choices: [], usage: modelUsage })}\n\n`)
    response.end('data: [DONE]\n\n')
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        requests,
        get maxInFlight() {
          return state.maxInFlight
        },
        close: () => server.close(),
      }),
    ),
  )
}
