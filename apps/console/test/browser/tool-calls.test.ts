import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import { sendTraces, timedSpan } from '../support/seed.ts'
import type { Stack } from '../support/stack.ts'

const hex = (bytes: number) => randomBytes(bytes).toString('hex')
const hrTime = (ms: number): [number, number] => [Math.floor(ms / 1000), (ms % 1000) * 1_000_000]

const weatherCall = { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' } }

/**
 * An agent's second LLM call as the Langtrace TypeScript SDK 6.3.7 sends it (its JSON exporter,
 * one POST per span, the shape of ../../test-fixtures/langtrace-ts-sdk-*.json): the request's
 * messages (a tool call and its result among them) in a gen_ai.content.prompt event, and the
 * answer, a choice without text, in gen_ai.content.completion as `JSON.stringify(tool_calls)`.
 */
async function sendLangtraceToolCall(stack: Stack): Promise<{ traceId: string; spanId: string }> {
  const traceId = hex(16)
  const rootId = hex(8)
  const spanId = hex(8)
  const start = Date.now() - 60_000
  const messages = [
    { role: 'system', content: 'You plan trips. Use the tools.' },
    { role: 'user', content: 'Should I pack an umbrella for Paris?' },
    { role: 'assistant', content: null, tool_calls: [weatherCall] },
    { role: 'tool', tool_call_id: 'call_w1', content: '{"temperature":21,"sky":"rain","chance":0.8}' },
  ]
  const answer = [{ role: 'assistant', content: JSON.stringify([{ id: 'call_n2', type: 'function', function: { name: 'notify_user', arguments: '{"text":"Pack an umbrella: 80% rain."}' } }]) }]
  const resource = { _attributes: { 'service.name': 'trip-planner' }, asyncAttributesPending: false, _syncAttributes: { 'service.name': 'trip-planner' } }
  const span = (id: string, name: string, parentSpanId: string | undefined, attributes: Record<string, unknown>, events: unknown[], from: number, to: number) => ({
    traceId,
    spanId: id,
    ...(parentSpanId ? { parentSpanId } : {}),
    name,
    startTime: hrTime(from),
    endTime: hrTime(to),
    attributes,
    kind: parentSpanId ? 2 : 0,
    status: { code: 0 },
    events,
    resource,
    links: [],
    instrumentationLibrary: { name: 'langtrace-ts-sdk' },
    duration: hrTime(to - from),
    droppedEventsCount: 0,
    droppedAttributesCount: 0,
    droppedLinksCount: 0,
    ended: true,
  })
  const call = span(
    spanId,
    'openai.chat.completions.create',
    rootId,
    {
      'langtrace.sdk.name': '@langtrase/typescript-sdk',
      'langtrace.service.name': 'openai',
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
      'gen_ai.request.tools': JSON.stringify([{ type: 'function', function: { name: 'get_weather' } }, { type: 'function', function: { name: 'notify_user' } }]),
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 24,
    },
    [
      { name: 'gen_ai.content.prompt', attributes: { 'gen_ai.prompt': JSON.stringify(messages) }, time: hrTime(start + 450), droppedAttributesCount: 0 },
      { name: 'gen_ai.content.completion', attributes: { 'gen_ai.completion': JSON.stringify(answer) }, time: hrTime(start + 450), droppedAttributesCount: 0 },
    ],
    start + 10,
    start + 450,
  )
  const root = span(rootId, 'plan-trip', undefined, {}, [], start, start + 500)
  for (const body of [[call], [root]]) {
    const response = await fetch(`${stack.url}/api/trace`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': stack.projectKey, 'user-agent': 'LangTraceExporter' },
      body: JSON.stringify(body),
    })
    assert.ok(response.ok, `POST /api/trace answered ${response.status}: ${await response.text()}`)
  }
  return { traceId, spanId }
}

/**
 * A generation as @langfuse/otel 5 records it (the attributes of one sent by the real SDK, in the
 * e2e suite): its input and output are what the application gave the SDK, as JSON, a tool call
 * and its result among the input; session and user ride on every span.
 */
async function sendLangfuseGeneration(stack: Stack): Promise<{ traceId: string; spanId: string }> {
  const input = [
    { role: 'user', content: 'Can a wombat get a refund?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_wombat', type: 'function', function: { name: 'refund_policy', arguments: '{"animal":"wombat"}' } }] },
    { role: 'tool', tool_call_id: 'call_wombat', content: 'Refunds within thirty days, wombats included.' },
  ]
  const shared = { 'user.id': 'lf-user', 'session.id': 'lf-session' }
  let sent = { traceId: '', spanId: '' }
  const start = Date.now() - 60_000
  await sendTraces(stack.url, stack.projectKey, 'wombat-shop', (tracer) => {
    const turn = timedSpan(tracer, 'support turn', start, start + 500, { attributes: { ...shared, 'langfuse.observation.type': 'span', 'langfuse.internal.is_app_root': true } })
    const generation = timedSpan(tracer, 'chat', start + 10, start + 450, {
      parent: turn.context,
      attributes: {
        ...shared,
        'langfuse.observation.type': 'generation',
        'langfuse.observation.input': JSON.stringify(input),
        'langfuse.observation.output': JSON.stringify({ role: 'assistant', content: 'Wombats get refunds within thirty days.' }),
        'langfuse.observation.model.name': 'gpt-4o-mini',
        'langfuse.observation.usage_details': JSON.stringify({ input: 1000, output: 100, total: 1100 }),
      },
    })
    generation.end()
    turn.end()
    sent = { traceId: generation.span.spanContext().traceId, spanId: generation.span.spanContext().spanId }
  })
  return sent
}

/** Once both spans are stored (the writer may still be on them when the request is answered). */
async function storedSpans(stack: Stack, traceId: string, count: number): Promise<void> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const response = await fetch(`${stack.url}/api/traces/${traceId}`, { headers: { 'x-api-key': stack.projectKey } })
    if (response.ok && ((await response.json()) as { spans: unknown[] }).spans.length === count) return
    if (Date.now() > deadline) throw new Error(`trace ${traceId} has not its ${count} spans after 30 s (last answer ${response.status})`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('tool calls in the conversation view', () => {
  const fx = consoleFixture(async (stack) => {
    const sent = await sendLangtraceToolCall(stack)
    await storedSpans(stack, sent.traceId, 2)
    return sent
  })

  it('shows the Langtrace SDK’s tool calls as calls, and each result labelled with the call it answers', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    const { traceId, spanId } = fx.seeded
    await page.goto(`/traces/${traceId}?project_id=${fx.stack.projectId}&span=${spanId}`)
    await page.getByRole('heading', { name: 'openai.chat.completions.create' }).waitFor()
    const messages = page.getByRole('list', { name: 'Messages' }).getByRole('listitem')
    await messages.nth(4).waitFor()
    assert.deepEqual(await messages.locator('.role').allTextContents(), ['System', 'User', 'Assistant', 'Tool', 'Assistant'])

    // The call in the prompt: a call of get_weather with its arguments indented, not JSON text.
    const firstCall = messages.nth(2).getByRole('group', { name: 'Tool call get_weather' })
    assert.equal(await firstCall.locator('.tool-name').textContent(), 'get_weather')
    assert.equal(await firstCall.getByLabel('Arguments').textContent(), '{\n  "city": "Paris",\n  "unit": "celsius"\n}')
    assert.equal(await messages.nth(2).locator('.message-text').count(), 0, 'no text beside the call')

    // Its result names the tool, leads back to the call, and its JSON is indented.
    const result = messages.nth(3)
    const back = result.getByRole('button', { name: '↑ result of get_weather' })
    assert.equal(await result.locator('.tool-result').textContent(), '{\n  "temperature": 21,\n  "sky": "rain",\n  "chance": 0.8\n}')

    // The answer: the SDK's JSON text of tool_calls, shown as a call of notify_user.
    const answer = messages.nth(4)
    assert.equal(await answer.locator('.message-text').count(), 0)
    assert.equal(await answer.locator('.tool-name').textContent(), 'notify_user')
    assert.equal(await answer.getByLabel('Arguments').textContent(), '{\n  "text": "Pack an umbrella: 80% rain."\n}')
    // The raw JSON stays in the span's events below, not in the chat.
    assert.equal(await page.getByRole('list', { name: 'Messages' }).getByText('"function"').count(), 0, 'no raw JSON of the calls in the chat')

    await back.click()
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Tool call get_weather')
    await screenshot(page, 'trace-tool-calls')
    assertNoProblems(opened)
    await opened.context.close()
  })
})

describe('a Langfuse generation in the conversation view', () => {
  const fx = consoleFixture(async (stack) => {
    const sent = await sendLangfuseGeneration(stack)
    await storedSpans(stack, sent.traceId, 2)
    return sent
  })

  it('shows its input, tool call, tool result and answer, not “No messages”', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    const { traceId, spanId } = fx.seeded
    await page.goto(`/traces/${traceId}?project_id=${fx.stack.projectId}&span=${spanId}`)
    await page.getByRole('heading', { name: 'chat' }).waitFor()
    const messages = page.getByRole('list', { name: 'Messages' }).getByRole('listitem')
    await messages.nth(3).waitFor()
    assert.deepEqual(await messages.locator('.role').allTextContents(), ['User', 'Assistant', 'Tool', 'Assistant'])
    assert.equal(await messages.nth(1).locator('.tool-name').textContent(), 'refund_policy')
    await messages.nth(2).getByRole('button', { name: '↑ result of refund_policy' }).waitFor()
    assert.equal(await messages.nth(2).locator('.message-text').textContent(), 'Refunds within thirty days, wombats included.')
    assert.equal(await messages.nth(3).locator('.message-text').textContent(), 'Wombats get refunds within thirty days.')
    assert.equal(await page.getByText('No messages were recorded on this span.').count(), 0)
    assert.equal(await page.getByRole('button', { name: 'Add span to dataset' }).count(), 1, 'the span can become a dataset item')
    await screenshot(page, 'trace-langfuse-generation')
    assertNoProblems(opened)
    await opened.context.close()
  })
})
