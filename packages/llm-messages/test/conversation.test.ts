import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import type { AnyValue, Attributes, SpanEvent } from '../src/any-value.ts'
import { conversationOf, type ChatMessage } from '../src/conversation.ts'

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

  it('reads a Langfuse generation’s observation input and output, its tool call and result (recorded from @langfuse/otel)', () => {
    const conversation = conversationOf(fixtureSpan('langfuse-otel-generation.json', 'chat'))
    assert.deepEqual(conversation?.conventions, ['Langfuse'])
    assert.deepEqual(said(conversation?.messages), [
      'input user: Can a wombat get a refund?',
      'input assistant: ',
      'input tool: Refunds within thirty days, wombats included.',
      'output assistant: Wombats get refunds within thirty days.',
    ])
    assert.deepEqual(conversation?.messages[1]?.toolCalls, [{ name: 'refund_policy', arguments: '{"animal":"wombat"}', id: 'call_wombat' }])
    assert.equal(conversation?.messages[2]?.answers, 'refund_policy')
    // The application's root observation recorded no input: it has no conversation.
    assert.equal(conversationOf(fixtureSpan('langfuse-otel-generation.json', 'support turn')), null)
    // A string given to the SDK is sent as it is, not as JSON.
    assert.deepEqual(said(conversationOf({ attributes: attrs({ 'langfuse.observation.input': 'Hi', 'langfuse.observation.output': '42' }) })?.messages), ['input user: Hi', 'output assistant: 42'])
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

  describe('tool calls', () => {
    const weatherCall = { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' } }
    // What the Langtrace TypeScript SDK 6.3.7 records for an OpenAI chat call (its openai/patch.js):
    // the request's messages as they were sent, and each choice as {role, content} where a choice
    // without text has `JSON.stringify(choice.message.tool_calls)` as its content.
    const langtraceTsEvents = (messages: unknown[], choices: Array<{ message: Record<string, unknown> }>): SpanEvent[] => [
      { name: 'gen_ai.content.prompt', attributes: attrs({ 'gen_ai.prompt': JSON.stringify(messages) }) },
      {
        name: 'gen_ai.content.completion',
        attributes: attrs({
          'gen_ai.completion': JSON.stringify(
            choices.map((choice) => ({
              role: choice.message.role,
              content: choice.message.content ?? (choice.message.function_call !== undefined ? JSON.stringify(choice.message.function_call) : JSON.stringify(choice.message.tool_calls)),
            })),
          ),
        }),
      },
    ]

    it('reads the Langtrace TypeScript SDK answer whose content is its tool calls as JSON text', () => {
      const conversation = conversationOf({
        attributes: attrs({ 'gen_ai.request.model': 'gpt-4o-mini' }),
        events: langtraceTsEvents([{ role: 'user', content: 'Weather in Paris?' }], [{ message: { role: 'assistant', content: null, tool_calls: [weatherCall, { ...weatherCall, id: 'call_w2', function: { name: 'get_time', arguments: '{}' } }] } }]),
      })
      assert.deepEqual(said(conversation?.messages), ['input user: Weather in Paris?', 'output assistant: '])
      assert.deepEqual(conversation?.messages[1]?.toolCalls, [
        { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}', id: 'call_w1' },
        { name: 'get_time', arguments: '{}', id: 'call_w2' },
      ])
    })

    it('reads a legacy function_call answer, and names tool results after the call they answer', () => {
      const conversation = conversationOf({
        attributes: {},
        events: langtraceTsEvents(
          [
            { role: 'user', content: 'Weather in Paris?' },
            { role: 'assistant', content: null, tool_calls: [weatherCall] },
            { role: 'tool', tool_call_id: 'call_w1', content: '{"temperature":21,"sky":"clear"}' },
          ],
          [{ message: { role: 'assistant', content: null, function_call: { name: 'notify', arguments: '{"text":"21 °C"}' } } }],
        ),
      })
      assert.deepEqual(said(conversation?.messages), ['input user: Weather in Paris?', 'input assistant: ', 'input tool: {"temperature":21,"sky":"clear"}', 'output assistant: '])
      assert.deepEqual(conversation?.messages[1]?.toolCalls, [{ name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}', id: 'call_w1' }])
      assert.equal(conversation?.messages[2]?.toolCallId, 'call_w1')
      assert.equal(conversation?.messages[2]?.answers, 'get_weather')
      assert.deepEqual(conversation?.messages[3]?.toolCalls, [{ name: 'notify', arguments: '{"text":"21 °C"}' }])
    })

    it('reads the Langtrace Python SDK answer whose content is the list of tool calls, or the function_call object', () => {
      const conversation = conversationOf({
        attributes: {},
        events: [
          { name: 'gen_ai.content.prompt', attributes: attrs({ 'gen_ai.prompt': JSON.stringify([{ role: 'user', content: 'Weather?' }]) }) },
          {
            name: 'gen_ai.content.completion',
            attributes: attrs({ 'gen_ai.completion': JSON.stringify([{ role: 'assistant', content: [weatherCall] }, { role: 'assistant', content: { name: 'notify', arguments: '{}' } }]) }),
          },
        ],
      })
      assert.deepEqual(said(conversation?.messages), ['input user: Weather?', 'output assistant: ', 'output assistant: '])
      assert.deepEqual(conversation?.messages[1]?.toolCalls, [{ name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}', id: 'call_w1' }])
      assert.deepEqual(conversation?.messages[2]?.toolCalls, [{ name: 'notify', arguments: '{}' }])
    })

    it('reads the Langtrace Python SDK prompt, where a turn that called tools is the bare list of its calls', () => {
      // Its openai patch: the sync client keeps each call as a dict, the async one as JSON text, and
      // from a plain dict message it can read only {id: "", type: ""}.
      const prompt = (calls: unknown[]) =>
        conversationOf({
          attributes: {},
          events: [
            {
              name: 'gen_ai.content.prompt',
              attributes: attrs({ 'gen_ai.prompt': JSON.stringify([{ role: 'user', content: 'Weather?' }, calls, { role: 'tool', tool_call_id: 'call_w1', content: 'rain' }]) }),
            },
            { name: 'gen_ai.content.completion', attributes: attrs({ 'gen_ai.completion': JSON.stringify([{ role: 'assistant', content: 'Take an umbrella.' }]) }) },
          ],
        })
      for (const calls of [[weatherCall], [JSON.stringify(weatherCall)]]) {
        const conversation = prompt(calls)
        assert.deepEqual(said(conversation?.messages), ['input user: Weather?', 'input assistant: ', 'input tool: rain', 'output assistant: Take an umbrella.'])
        assert.deepEqual(conversation?.messages[1]?.toolCalls, [{ name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}', id: 'call_w1' }])
        assert.equal(conversation?.messages[2]?.answers, 'get_weather')
      }
      const unnamed = prompt([{ id: '', type: '' }])
      assert.deepEqual(unnamed?.messages[1]?.toolCalls, [{ name: '', arguments: '' }])
      assert.equal(unnamed?.messages[2]?.answers, undefined)
    })

    it('reads the Langtrace Python SDK’s Anthropic tool_use answer from gen_ai.request.tool_results', () => {
      const toolUse = { id: 'toolu_9', input: { city: 'Oslo' }, name: 'get_weather', type: 'tool_use' }
      const conversation = conversationOf({
        attributes: attrs({ 'gen_ai.request.tool_results': JSON.stringify(JSON.stringify(toolUse)) }),
        events: [{ name: 'gen_ai.content.prompt', attributes: attrs({ 'gen_ai.prompt': JSON.stringify([{ role: 'user', content: 'Weather in Oslo?' }]) }) }],
      })
      assert.deepEqual(said(conversation?.messages), ['input user: Weather in Oslo?', 'output assistant: '])
      assert.deepEqual(conversation?.messages[1]?.toolCalls, [{ name: 'get_weather', arguments: '{"city":"Oslo"}', id: 'toolu_9' }])
      // Results sent to the model (Cohere's) under a similar name are not an answer.
      assert.equal(conversationOf({ attributes: attrs({ 'gen_ai.request.tool_results': JSON.stringify([{ call: { name: 'x' }, outputs: [] }]) }) }), null)
    })

    it('reads the same shapes from the llm.prompts / llm.completions attributes of older Langtrace SDKs', () => {
      const conversation = conversationOf({
        attributes: attrs({
          'llm.prompts': JSON.stringify([{ role: 'user', content: 'Weather?' }]),
          'llm.completions': JSON.stringify([{ role: 'assistant', content: JSON.stringify([weatherCall]) }]),
        }),
      })
      assert.deepEqual(conversation?.conventions, ['Langtrace'])
      assert.deepEqual(conversation?.messages[1]?.toolCalls.map((call) => call.name), ['get_weather'])
      assert.equal(conversation?.messages[1]?.content, '')
    })

    it('keeps JSON text that is not a list of calls, and JSON a user wrote, as text', () => {
      const conversation = conversationOf({
        attributes: attrs({
          'llm.prompts': JSON.stringify([{ role: 'user', content: JSON.stringify([weatherCall]) }]),
          'llm.completions': JSON.stringify([{ role: 'assistant', content: '[{"city":"Paris"}]' }]),
        }),
      })
      assert.deepEqual(said(conversation?.messages), [`input user: ${JSON.stringify([weatherCall])}`, 'output assistant: [{"city":"Paris"}]'])
      assert.ok(conversation?.messages.every((message) => message.toolCalls.length === 0))
    })

    it('links results to calls in the OpenInference, OpenLLMetry, Anthropic and OTel GenAI shapes', () => {
      const openInference = conversationOf({
        attributes: attrs({
          'llm.input_messages.0.message.role': 'assistant',
          'llm.input_messages.0.message.tool_calls.0.tool_call.id': 'oi_1',
          'llm.input_messages.0.message.tool_calls.0.tool_call.function.name': 'search',
          'llm.input_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"q":"otel"}',
          'llm.input_messages.1.message.role': 'tool',
          'llm.input_messages.1.message.tool_call_id': 'oi_1',
          'llm.input_messages.1.message.content': '3 results',
          'llm.output_messages.0.message.role': 'assistant',
          'llm.output_messages.0.message.content': 'Found 3.',
        }),
      })
      assert.deepEqual(openInference?.messages.map((message) => message.answers), [undefined, 'search', undefined])
      const openLlmetry = conversationOf({
        attributes: attrs({
          'gen_ai.prompt.0.role': 'assistant',
          'gen_ai.prompt.0.tool_calls.0.id': 'ol_1',
          'gen_ai.prompt.0.tool_calls.0.name': 'lookup',
          'gen_ai.prompt.1.role': 'tool',
          'gen_ai.prompt.1.tool_call_id': 'ol_1',
          'gen_ai.prompt.1.content': 'ok',
        }),
      })
      assert.equal(openLlmetry?.messages[1]?.answers, 'lookup')
      assert.equal(openLlmetry?.messages[1]?.name, undefined, 'the call id is not the participant name')
      const anthropic = conversationOf({
        attributes: attrs({
          'llm.prompts': JSON.stringify([
            { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_stock', input: { ticker: 'ACME' } }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '42.5' }] },
          ]),
        }),
      })
      assert.deepEqual(said(anthropic?.messages), ['input assistant: ', 'input user: 42.5'])
      assert.deepEqual(anthropic?.messages[0]?.toolCalls, [{ name: 'get_stock', arguments: '{"ticker":"ACME"}', id: 'toolu_1' }])
      assert.equal(anthropic?.messages[1]?.answers, 'get_stock')
      const otel = conversationOf({
        attributes: attrs({
          'gen_ai.input.messages': JSON.stringify([
            { role: 'assistant', parts: [{ type: 'tool_call', id: 't1', name: 'weather', arguments: { city: 'Lyon' } }] },
            { role: 'tool', parts: [{ type: 'tool_call_response', id: 't1', response: 'sunny' }] },
            { role: 'tool', parts: [{ type: 'tool_call_response', id: 'elsewhere', response: 'x' }] },
          ]),
        }),
      })
      assert.deepEqual(otel?.messages.map((message) => [message.toolCallId, message.answers]), [[undefined, undefined], ['t1', 'weather'], ['elsewhere', undefined]])
    })
  })
})
