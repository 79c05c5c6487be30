import type OpenAI from 'openai'
import { judgeInstruction, judgmentSchema } from './judge-prompt.ts'
import { callErrorOf, LlmCallError, modelClient, type ModelEndpoint } from '@tracewell/llm-calls'

// One call to a judge model over an OpenAI-compatible chat completions API (the `openai`
// package through the outbound guard, @tracewell/llm-calls' modelClient; its own retries are off,
// the queue retries with backoff). Structured output first (a JSON schema), falling back to JSON mode and
// then to the instruction alone for endpoints that refuse those response formats.

/** Why a judgment failed; `retryable` says whether another attempt could do better. */
export class JudgeError extends LlmCallError {
  override readonly name = 'JudgeError'
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
  for (const [index, format] of responseFormats.entries()) {
    try {
      const completion = await client.chat.completions.create({
        model: call.model,
        temperature: 0,
        messages: [
          { role: 'system', content: judgeInstruction },
          { role: 'user', content: call.prompt },
        ],
        ...(format === undefined ? {} : { response_format: format }),
      })
      const choice = completion.choices[0]
      if (choice?.message.refusal) throw new JudgeError(`the judge refused: ${choice.message.refusal.slice(0, 300)}`, true)
      const { score, reasoning } = judgmentOf(choice?.message.content ?? '')
      const usage = completion.usage
      return {
        score,
        reasoning,
        model: completion.model || call.model,
        inputTokens: usage?.prompt_tokens ?? null,
        outputTokens: usage?.completion_tokens ?? null,
        cachedInputTokens: usage?.prompt_tokens_details?.cached_tokens ?? null,
        reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens ?? null,
        latencyMs: Math.round(performance.now() - started),
      }
    } catch (error) {
      if (refusesFormat(error, openai.APIError) && index < responseFormats.length - 1) continue
      throw judgeErrorOf(error)
    }
  }
  throw new JudgeError('no response format was accepted', false)
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

const judgeErrorOf = (error: unknown) => callErrorOf(error, 'the judge', (message, retryable) => new JudgeError(message, retryable))
