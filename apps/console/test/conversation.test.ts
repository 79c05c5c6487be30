import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import type { AnyValue, Attributes, SpanEvent } from '../src/api/types.ts'
import { conversationOf, type ChatMessage } from '../src/lib/conversation.ts'

const s = (stringValue: string): AnyValue => ({ stringValue })
const attrs = (entries: Record<string, string | number>): Attributes =>
  Object.fromEntries(Object.entries(entries).map(([key, value]) => [key, typeof value === 'number' ? { intValue: String(value) } : s(value)]))

/** role: content pairs, the way a reader of the chat sees them. */
const said = (messages: ChatMessage[] | undefined) => messages?.map((message) => `${message.direction} ${message.role}: ${message.content}`)

/** A span of one of the shared instrumentation fixtures, its attributes in the stored map form. */
function fixtureSpan(file: string, name: string): { attributes: Attributes; events: SpanEvent[] } {
  const request = JSON.parse(readFileSync(new URL(`../../../test-fixtures/llm-conventions/${file}`, import.meta.url), 'utf8'))
  for (const resourceSpans of request.resourceSpans) {
    for (const scopeSpans of resourceSpans.scopeSpans) {
      for (const span of scopeSpans.spans) {
        if (span.name !== name) continue
        const attributes = Object.fromEntries((span.attributes as Array<{ key: string; value: AnyValue }>).map(({ key, value }) => [key, value]))
        return { attributes, events: span.events ?? [] }
      }
    }
  }
  throw new Error(`${file} has no span ${name}`)
}

describe('conversationOf', () => {
  it('reads Langtrace llm.prompts / llm.completions', () => {
    const conversation = conversationOf({
      attributes: attrs({
        'llm.prompts': JSON.stringify([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'How do I reset my password?' }]),
        'llm.completions': JSON.stringify([{ role: 'assistant', content: 'Settings → Security.' }]),
      }),
    })
    assert.deepEqual(conversation?.conventions, ['Langtrace'])
    assert.deepEqual(said(conversation?.messages), ['input system: Be brief.', 'input user: How do I reset my password?', 'output assistant: Settings → Security.'])
  })

  it('reads the older llm.request.messages and OpenAI choices in llm.response.choices', () => {
    const conversation = conversationOf({
      attributes: attrs({
        'llm.request.messages': JSON.stringify([{ role: 'user', content: 'Quote "exactly"' }]),
        'llm.response.choices': JSON.stringify([{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }]),
      }),
    })
    assert.deepEqual(said(conversation?.messages), ['input user: Quote "exactly"', 'output assistant: Done.'])
  })

  it('reads OpenLLMetry gen_ai.prompt.N / gen_ai.completion.N, tool calls included', () => {
    const conversation = conversationOf({
      attributes: attrs({
        'gen_ai.prompt.1.role': 'user',
        'gen_ai.prompt.1.content': 'Weather in Paris?',
        'gen_ai.prompt.0.role': 'system',
        'gen_ai.prompt.0.content': 'You are a weather bot.',
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.finish_reason': 'tool_calls',
        'gen_ai.completion.0.tool_calls.0.name': 'get_weather',
        'gen_ai.completion.0.tool_calls.0.arguments': '{"city":"Paris"}',
        'gen_ai.completion.0.tool_calls.0.id': 'call_1',
      }),
    })
    assert.deepEqual(conversation?.conventions, ['OpenLLMetry'])
    assert.deepEqual(said(conversation?.messages), ['input system: You are a weather bot.', 'input user: Weather in Paris?', 'output assistant: '])
    assert.deepEqual(conversation?.messages[2]?.toolCalls, [{ name: 'get_weather', arguments: '{"city":"Paris"}', id: 'call_1' }])
  })

  it('reads OpenInference llm.input_messages / llm.output_messages (the shared fixture)', () => {
    const conversation = conversationOf(fixtureSpan('openinference-openai.json', 'OpenAI Chat Completions'))
    assert.deepEqual(conversation?.conventions, ['OpenInference'])
    assert.equal(conversation?.messages.length, 2)
    assert.deepEqual(conversation?.messages.map((message) => [message.direction, message.role]), [
      ['input', 'user'],
      ['output', 'assistant'],
    ])
    assert.ok(conversation?.messages.every((message) => message.content.length > 0))
  })

  it('reads the current OTel GenAI JSON messages with typed parts (the shared OpenLLMetry fixture)', () => {
    const conversation = conversationOf(fixtureSpan('openllmetry-openai.json', 'chat gpt-4o-mini'))
    assert.deepEqual(conversation?.conventions, ['OpenTelemetry GenAI'])
    assert.ok((conversation?.messages.length ?? 0) >= 2)
    assert.equal(conversation?.messages.at(-1)?.direction, 'output')
    assert.ok(conversation?.messages.every((message) => message.content.length > 0 || message.toolCalls.length > 0))
  })

  it('reads OTel GenAI parts: system instructions, tool calls and tool results', () => {
    const conversation = conversationOf({
      attributes: attrs({
        'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'Answer in French.' }]),
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: 'Weather?' }] },
          { role: 'assistant', parts: [{ type: 'tool_call', id: 't1', name: 'weather', arguments: { city: 'Lyon' } }] },
          { role: 'tool', parts: [{ type: 'tool_call_response', id: 't1', response: 'sunny' }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Il fait beau.' }], finish_reason: 'stop' }]),
      }),
    })
    assert.deepEqual(said(conversation?.messages), ['input system: Answer in French.', 'input user: Weather?', 'input assistant: ', 'input tool: sunny', 'output assistant: Il fait beau.'])
    assert.deepEqual(conversation?.messages[2]?.toolCalls, [{ name: 'weather', arguments: '{"city":"Lyon"}', id: 't1' }])
  })

  it('reads the Vercel AI SDK ai.prompt and ai.response.text (the shared fixture)', () => {
    const conversation = conversationOf(fixtureSpan('vercel-ai-sdk-5.json', 'ai.generateText'))
    assert.deepEqual(conversation?.conventions, ['Vercel AI SDK'])
    assert.equal(conversation?.messages.at(-1)?.role, 'assistant')
    assert.equal(conversation?.messages.at(-1)?.direction, 'output')
    assert.equal(conversation?.messages[0]?.direction, 'input')
  })

  it('reads Vercel ai.prompt.messages with content parts and tool calls', () => {
    const conversation = conversationOf({
      attributes: attrs({
        'ai.prompt.messages': JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image', image: 'x' }] }]),
        'ai.response.toolCalls': JSON.stringify([{ toolCallType: 'function', toolCallId: 'c1', toolName: 'lookup', args: '{"q":1}' }]),
      }),
    })
    assert.deepEqual(said(conversation?.messages), ['input user: Hi\n[image]', 'output assistant: '])
    assert.deepEqual(conversation?.messages[1]?.toolCalls, [{ name: 'lookup', arguments: '{"q":1}', id: 'c1' }])
  })

  it('reads GenAI span events, and leaves a span without messages alone', () => {
    const conversation = conversationOf({
      attributes: {},
      events: [
        { name: 'gen_ai.system.message', attributes: attrs({ content: 'Be kind.' }) },
        { name: 'gen_ai.user.message', attributes: attrs({ content: 'Hello' }) },
        { name: 'gen_ai.choice', attributes: attrs({ message: JSON.stringify({ role: 'assistant', content: 'Hi!' }) }) },
      ],
    })
    assert.deepEqual(conversation?.conventions, ['GenAI events'])
    assert.deepEqual(said(conversation?.messages), ['input system: Be kind.', 'input user: Hello', 'output assistant: Hi!'])
    assert.equal(conversationOf({ attributes: attrs({ 'http.method': 'POST' }), events: [{ name: 'exception' }] }), null)
  })

  it('takes the prompt from one convention and the answer from another when a span mixes them', () => {
    const conversation = conversationOf({
      attributes: attrs({ 'gen_ai.prompt.0.role': 'user', 'gen_ai.prompt.0.content': 'Q', 'llm.completions': JSON.stringify([{ role: 'assistant', content: 'A' }]) }),
    })
    assert.deepEqual(conversation?.conventions, ['OpenLLMetry', 'Langtrace'])
    assert.deepEqual(said(conversation?.messages), ['input user: Q', 'output assistant: A'])
  })

  it('keeps content that is not JSON, and numbers that look like JSON, as text', () => {
    const conversation = conversationOf({ attributes: attrs({ 'gen_ai.prompt.0.content': '42', 'gen_ai.completion.0.content': '{not json' }) })
    assert.deepEqual(said(conversation?.messages), ['input user: 42', 'output assistant: {not json'])
  })
})
