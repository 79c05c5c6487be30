import type OpenAI from 'openai'
import { judgeInstruction, judgmentSchema } from './judge-prompt.ts'
import { callErrorOf, LlmCallError, modelClient, type ChatAnswer, type ChatRequestMessage, type ModelEndpoint } from '@tracewell/llm-calls'

// One call to a judge model over an OpenAI-compatible chat completions API (the `openai`
// package through the outbound guard, @tracewell/llm-calls' modelClient; its own retries are off,
// the queue retries with backoff). Structured output first (a JSON schema), falling back to JSON mode and
// then to the instruction alone for endpoints that refuse those response formats.

/** Why a judgment failed; `retryable` says whether another attempt could do better. */
export class JudgeError extends LlmCallError {
  override readonly name = 'JudgeError'
  /** The requests this attempt made before it failed: they are paid for all the same. */
  calls: JudgeCallRecord[] = []
}

/** One request to the judge, answered or not: what it sent, what came back and what it used. */
export interface JudgeCallRecord {
  startedAtMs: number
  messages: ChatRequestMessage[]
  /** The endpoint's answer, judgment or not (text that is no JSON, a refusal); null when none came. */
  answer: ChatAnswer | null
  /** Why the request gave no judgment; null for the one that did. */
  error: string | null
}

export interface JudgeCall extends ModelEndpoint {
  model: string
  prompt: string
}

export interface Judgment {
  score: number
  reasoning: string
  /** The model that answered (the response's), else the one asked. */
  model: string
  inputTokens: number | null
  outputTokens: number | null
  cachedInputTokens: number | null
  reasoningTokens: number | null
  latencyMs: number
  /** Every request of the attempt, the format fallbacks before the answer included. */
  calls: JudgeCallRecord[]
}

type ResponseFormat = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming['response_format']

const responseFormats: Array<ResponseFormat | undefined> = [
  { type: 'json_schema', json_schema: { name: 'judgment', strict: true, schema: judgmentSchema as unknown as Record<string, unknown> } },
  { type: 'json_object' },
  undefined,
]

/** An endpoint's 400 about the response format: try the next, plainer one. */
const refusesFormat = (error: unknown, APIError: typeof OpenAI.APIError) => error instanceof APIError && (error.status === 400 || error.status === 422) && /response_format|json_schema|json_object|structured/i.test(error.message)

export async function askJudge(call: JudgeCall): Promise<Judgment> {
  const { openai, client } = await modelClient(call)
  const started = performance.now()
  const messages: ChatRequestMessage[] = [
    { role: 'system', content: judgeInstruction },
    { role: 'user', content: call.prompt },
  ]
  const calls: JudgeCallRecord[] = []
  for (const [index, format] of responseFormats.entries()) {
    const record: JudgeCallRecord = { startedAtMs: Date.now(), messages, answer: null, error: null }
    calls.push(record)
    const callStarted = performance.now()
    try {
      const completion = await client.chat.completions.create({
        model: call.model,
        temperature: 0,
        messages: messages as OpenAI.Chat.Completions.ChatCompletionMessageParam[],
        ...(format === undefined ? {} : { response_format: format }),
      })
      const answer = answerOf(completion, call.model, Math.round(performance.now() - callStarted))
      record.answer = answer
      const choice = completion.choices[0]
      if (choice?.message.refusal) throw new JudgeError(`the judge refused: ${choice.message.refusal.slice(0, 300)}`, true)
      const { score, reasoning } = judgmentOf(choice?.message.content ?? '')
      return {
        score,
        reasoning,
        model: answer.model,
        inputTokens: answer.inputTokens,
        outputTokens: answer.outputTokens,
        cachedInputTokens: answer.cachedInputTokens,
        reasoningTokens: answer.reasoningTokens,
        latencyMs: Math.round(performance.now() - started),
        calls,
      }
    } catch (error) {
      const failure = judgeErrorOf(error)
      record.error = failure.message
      if (refusesFormat(error, openai.APIError) && index < responseFormats.length - 1) continue
      failure.calls = calls
      throw failure
    }
  }
  throw Object.assign(new JudgeError('no response format was accepted', false), { calls })
}

/** A completion as the span of the call records it, whether or not it holds a judgment. */
function answerOf(completion: OpenAI.Chat.Completions.ChatCompletion, askedModel: string, latencyMs: number): ChatAnswer {
  const choice = completion.choices[0]
  const usage = completion.usage
  return {
    text: choice?.message.content ?? choice?.message.refusal ?? '',
    toolCalls: [],
    finishReason: choice?.finish_reason ?? null,
    model: completion.model || askedModel,
    inputTokens: usage?.prompt_tokens ?? null,
    outputTokens: usage?.completion_tokens ?? null,
    cachedInputTokens: usage?.prompt_tokens_details?.cached_tokens ?? null,
    reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens ?? null,
    latencyMs,
    firstTokenMs: null,
  }
}

/** `{"score": …, "reasoning": …}` from the answer's text (a Markdown code fence around it is tolerated). */
export function judgmentOf(content: string): { score: number; reasoning: string } {
  const text = content.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '')
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new JudgeError(`the judge's answer is not JSON: ${JSON.stringify(content.slice(0, 200))}`, true)
  }
  const { score, reasoning } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { score?: unknown; reasoning?: unknown }
  const number = typeof score === 'string' && score.trim() !== '' ? Number(score) : score
  if (typeof number !== 'number' || !Number.isFinite(number)) throw new JudgeError(`the judge's answer has no numeric score: ${JSON.stringify(content.slice(0, 200))}`, true)
  return { score: number, reasoning: typeof reasoning === 'string' ? reasoning : '' }
}

function judgeErrorOf(error: unknown): JudgeError {
  const failure = callErrorOf(error, 'the judge', (message, retryable) => new JudgeError(message, retryable))
  return failure instanceof JudgeError ? failure : new JudgeError(failure.message, failure.retryable)
}
