import type OpenAI from 'openai'
import { callErrorOf, LlmCallError } from './llm-call-error.ts'
import { modelClient, type ModelEndpoint } from './model-client.ts'

// One call to a model under test (an experiment item, a playground run) over an OpenAI-compatible
// chat completions API: the `openai` package through the outbound guard (model-client.ts). Streamed
// when asked (the playground shows the answer as it comes), with the usage asked for in the last
// chunk, as OpenAI sends it with stream_options.include_usage.

export interface ChatRequestMessage {
  role: 'system' | 'user' | 'assistant' | 'developer' | 'tool'
  content: string
}

export interface ChatCall extends ModelEndpoint {
  model: string
  messages: readonly ChatRequestMessage[]
  /** The prompt's model settings (temperature, max_tokens, …), passed on as they are. */
  settings: Record<string, unknown>
  /** Stream the answer, handing each piece of text here as it arrives. */
  onText?: (text: string) => void
}

export interface ChatAnswer {
  text: string
  toolCalls: Array<{ name: string; arguments: string; id?: string }>
  finishReason: string | null
  /** The model that answered (the response's), else the one asked. */
  model: string
  inputTokens: number | null
  outputTokens: number | null
  cachedInputTokens: number | null
  reasoningTokens: number | null
  latencyMs: number
  /** When streamed: the time to the first piece of text. */
  firstTokenMs: number | null
}

/** Settings that are the call's own business: a prompt's settings never override them. */
const reservedSettings = new Set(['model', 'messages', 'stream', 'stream_options', 'n'])

export class ModelCallError extends LlmCallError {
  override readonly name = 'ModelCallError'
}

/** An endpoint's 400 about streaming (or its usage option): it answers whole, not streamed. */
const refusesStreaming = (error: unknown, APIError: typeof OpenAI.APIError) => error instanceof APIError && (error.status === 400 || error.status === 422) && /stream/i.test(error.message)

const modelErrorOf = (error: unknown) => callErrorOf(error, 'the model', (message, retryable) => new ModelCallError(message, retryable))

export function callSettings(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(settings).filter(([key, value]) => !reservedSettings.has(key) && value !== undefined && value !== null))
}

export async function callChat(call: ChatCall): Promise<ChatAnswer> {
  const { openai, client } = await modelClient(call)
  const started = performance.now()
  const base = { ...callSettings(call.settings), model: call.model, messages: call.messages as OpenAI.Chat.Completions.ChatCompletionMessageParam[] }
  try {
    if (call.onText === undefined) {
      const completion = await client.chat.completions.create({ ...base, stream: false } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming)
      const choice = completion.choices[0]
      const usage = completion.usage
      return {
        text: choice?.message.content ?? choice?.message.refusal ?? '',
        toolCalls: (choice?.message.tool_calls ?? []).flatMap((toolCall) =>
          toolCall.type === 'function' ? [{ name: toolCall.function.name, arguments: toolCall.function.arguments, id: toolCall.id }] : [],
        ),
        finishReason: choice?.finish_reason ?? null,
        model: completion.model || call.model,
        inputTokens: usage?.prompt_tokens ?? null,
        outputTokens: usage?.completion_tokens ?? null,
        cachedInputTokens: usage?.prompt_tokens_details?.cached_tokens ?? null,
        reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens ?? null,
        latencyMs: Math.round(performance.now() - started),
        firstTokenMs: null,
      }
    }
    let stream
    try {
      stream = await client.chat.completions.create({ ...base, stream: true, stream_options: { include_usage: true } } as OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming)
    } catch (error) {
      if (!refusesStreaming(error, openai.APIError)) throw error
      // Streamed where the endpoint streams: this one does not, so the answer comes whole.
      const { onText, ...whole } = call
      const answer = await callChat(whole)
      if (answer.text !== '') onText(answer.text)
      return answer
    }
    let text = ''
    let model = ''
    let finishReason: string | null = null
    let firstTokenMs: number | null = null
    let usage: OpenAI.Completions.CompletionUsage | undefined
    const toolCalls: Array<{ name: string; arguments: string; id?: string }> = []
    for await (const chunk of stream) {
      if (chunk.model) model = chunk.model
      if (chunk.usage) usage = chunk.usage
      const choice = chunk.choices[0]
      if (choice === undefined) continue
      if (choice.finish_reason) finishReason = choice.finish_reason
      const piece = choice.delta.content
      if (piece) {
        firstTokenMs ??= Math.round(performance.now() - started)
        text += piece
        call.onText(piece)
      }
      for (const delta of choice.delta.tool_calls ?? []) {
        const slot = (toolCalls[delta.index] ??= { name: '', arguments: '' })
        if (delta.id) slot.id = delta.id
        if (delta.function?.name) slot.name += delta.function.name
        if (delta.function?.arguments) slot.arguments += delta.function.arguments
      }
    }
    return {
      text,
      toolCalls: toolCalls.filter(Boolean),
      finishReason,
      model: model || call.model,
      inputTokens: usage?.prompt_tokens ?? null,
      outputTokens: usage?.completion_tokens ?? null,
      cachedInputTokens: usage?.prompt_tokens_details?.cached_tokens ?? null,
      reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens ?? null,
      latencyMs: Math.round(performance.now() - started),
      firstTokenMs,
    }
  } catch (error) {
    throw modelErrorOf(error)
  }
}
