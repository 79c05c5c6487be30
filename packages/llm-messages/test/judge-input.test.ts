import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { fillJudgePrompt, judgeInputOf, judgeRequestOf, judgeSkipReason, MAX_SIDE_CHARS, type JudgedSpan } from '../src/index.ts'

const s = (value: string) => ({ stringValue: value })
const span = (parentSpanId: string | null, attributes: JudgedSpan['attributes'], events: JudgedSpan['events'] = []): JudgedSpan => ({ parentSpanId, attributes, events })

describe('what a judge reads of a trace', () => {
  it('takes the first LLM call’s prompt and the last one’s answer, in each convention', () => {
    const spans = [
      span(null, { 'http.route': s('/chat') }),
      span('root', { 'llm.prompts': s('[{"role":"user","content":"first question"}]'), 'llm.completions': s('[{"role":"assistant","content":"draft"}]') }),
      span('root', { 'gen_ai.prompt.1.content': s('second'), 'gen_ai.prompt.0.content': s('first'), 'gen_ai.prompt.0.role': s('system'), 'gen_ai.completion.0.content': s('final answer'), 'gen_ai.completion.0.role': s('assistant') }),
    ]
    assert.deepEqual(judgeInputOf(spans), { input: 'user: first question', output: 'assistant: final answer' })
    assert.equal(judgeInputOf([spans[0] as JudgedSpan, spans[2] as JudgedSpan]).input, 'system: first\nuser: second')
    const events = [span(null, {}, [{ name: 'gen_ai.content.prompt', attributes: { 'gen_ai.prompt': s('[{"role":"user","content":"hi"}]') } }, { name: 'gen_ai.content.completion', attributes: { 'gen_ai.completion': s('[{"role":"assistant","content":"hello"}]') } }])]
    assert.deepEqual(judgeInputOf(events), { input: 'user: hi', output: 'assistant: hello' })
  })

  it('shows a tool call the model answered with, which has no text', () => {
    const spans = [span(null, { 'gen_ai.input.messages': s('[{"role":"user","parts":[{"type":"text","content":"weather?"}]}]'), 'gen_ai.output.messages': s('[{"role":"assistant","parts":[{"type":"tool_call","name":"forecast","arguments":{"city":"Paris"}}]}]') })]
    assert.deepEqual(judgeInputOf(spans), { input: 'user: weather?', output: 'assistant calls forecast({"city":"Paris"})' })
  })

  it('prefers the root span’s own input and output (OpenInference, OpenLLMetry entities)', () => {
    const spans = [span(null, { 'input.value': s('the question'), 'traceloop.entity.output': s('the answer') }), span('root', { 'llm.prompts': s('inner') })]
    assert.deepEqual(judgeInputOf(spans), { input: 'the question', output: 'the answer' })
  })

  it('judges a Langfuse trace on its generation’s messages, never on its session or user (recorded from @langfuse/otel)', () => {
    const request = JSON.parse(readFileSync(new URL('../../../test-fixtures/llm-conventions/langfuse-otel-generation.json', import.meta.url), 'utf8'))
    const spans = (request.resourceSpans[0].scopeSpans[0].spans as Array<{ parentSpanId?: string; attributes: Array<{ key: string; value: { stringValue: string } }> }>).map((recorded) =>
      span(recorded.parentSpanId ?? null, Object.fromEntries(recorded.attributes.map(({ key, value }) => [key, value]))),
    )
    const judged = judgeRequestOf('Question: {{input}}\nAnswer: {{output}}', spans)
    assert.equal(judged.prompt, [
      'Question: user: Can a wombat get a refund?',
      'assistant calls refund_policy({"animal":"wombat"})',
      'tool: Refunds within thirty days, wombats included.',
      'Answer: assistant: Wombats get refunds within thirty days.',
    ].join('\n'))
    assert.ok(!/lf-session|lf-user/.test(JSON.stringify(judged)), 'no session or user id')
  })

  it('judges a one-span OpenInference trace on its messages, not on the request JSON in input.value', () => {
    const spans = [
      span(null, {
        'openinference.span.kind': s('LLM'),
        'input.value': s('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"How long do refunds take?"}]}'),
        'output.value': s('{"id":"chatcmpl-1","choices":[{"message":{"role":"assistant","content":"Five days."}}]}'),
        'llm.input_messages.0.message.role': s('user'),
        'llm.input_messages.0.message.content': s('How long do refunds take?'),
        'llm.output_messages.0.message.role': s('assistant'),
        'llm.output_messages.0.message.content': s('Five days.'),
      }),
    ]
    assert.deepEqual(judgeInputOf(spans), { input: 'user: How long do refunds take?', output: 'assistant: Five days.' })
  })

  it('prefers a Langfuse trace’s own input and output (updateTrace) to its generations’', () => {
    const spans = [span(null, { 'langfuse.trace.input': s('the question'), 'langfuse.trace.output': s('the answer') }), span('root', { 'langfuse.observation.input': s('inner') })]
    assert.deepEqual(judgeInputOf(spans), { input: 'the question', output: 'the answer' })
  })

  it('reads nothing from a trace without messages (not its attributes), and cuts long text', () => {
    assert.deepEqual(judgeInputOf([span(null, { 'http.route': s('/x') })]), { input: null, output: null })
    assert.deepEqual(judgeInputOf([span(null, { 'input.value': s('  '), 'output.value': s('ok') })]), { input: null, output: 'ok' })
    const { input } = judgeInputOf([span(null, { 'input.value': s('x'.repeat(MAX_SIDE_CHARS + 10)) })])
    assert.equal(input, `${'x'.repeat(MAX_SIDE_CHARS)}… (cut at ${MAX_SIDE_CHARS} characters)`)
  })
})

describe('when a judge skips a trace', () => {
  it('skips when a side the template uses is missing, not when an unused one is', () => {
    assert.equal(judgeSkipReason('Q: {{input}} A: {{ output }}', { input: 'q', output: null }), 'the trace has no output to judge (the template uses {{output}})')
    assert.equal(judgeSkipReason('Q: {{input}} A: {{output}}', { input: null, output: null }), 'the trace has no input and no output to judge (the template uses {{input}} and {{output}})')
    assert.equal(judgeSkipReason('Is this polite? {{output}}', { input: null, output: 'thanks' }), null)
    assert.equal(judgeSkipReason('Rate the exchange', { input: null, output: null }), 'the trace has no input and no output to judge')
    assert.equal(judgeSkipReason('Rate the exchange', { input: 'q', output: null }), null)
  })

  it('gives the filled prompt, or the reason and no prompt', () => {
    const trace = [span(null, { 'input.value': s('why $1?'), 'output.value': s('because') })]
    assert.deepEqual(judgeRequestOf('Q: {{input}} A: {{ output }} {{other}} {x}', trace), { input: 'why $1?', output: 'because', prompt: 'Q: why $1? A: because {{other}} {x}', skipped: null })
    assert.deepEqual(judgeRequestOf('A: {{output}}', [span(null, {})]), { input: null, output: null, prompt: null, skipped: 'the trace has no output to judge (the template uses {{output}})' })
  })

  it('fills {{expected_output}} from an experiment trace’s root, empty for other traces', () => {
    const io = judgeInputOf([span(null, { 'input.value': s('Capital of France?'), 'output.value': s('Paris.'), 'tracewell.dataset.item.expected_output': s('Paris') })])
    assert.deepEqual(io, { input: 'Capital of France?', output: 'Paris.', expectedOutput: 'Paris' })
    assert.equal(fillJudgePrompt('Expected: {{ expected_output }} Got: {{output}}', io), 'Expected: Paris Got: Paris.')
    assert.equal(fillJudgePrompt('Expected: {{expected_output}}.', { input: 'a', output: 'b' }), 'Expected: .')
  })
})
