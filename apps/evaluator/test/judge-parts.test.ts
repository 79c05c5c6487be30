import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { SpanDto } from '@tracewell/db'
import { JudgeError, judgmentOf } from '../src/judge.client.ts'
import { fillJudgePrompt } from '../src/judge-prompt.ts'
import { MAX_SIDE_CHARS, traceInputOutput } from '../src/trace-io.ts'

const span = (spanId: string, parentSpanId: string | null, attributes: Record<string, unknown>, llmModel: string | null = null) =>
  ({ spanId, parentSpanId, attributes, llmModel }) as unknown as SpanDto
const s = (value: string) => ({ stringValue: value })

describe('what the judge reads of a trace', () => {
  it('takes the first LLM call’s prompt and the last one’s completion, in each convention', () => {
    const spans = [
      span('root', null, { 'http.route': s('/chat') }),
      span('a', 'root', { 'llm.prompts': s('[{"role":"user","content":"first question"}]'), 'llm.completions': s('draft') }, 'gpt-4o'),
      span('b', 'root', { 'gen_ai.prompt.1.content': s('second'), 'gen_ai.prompt.0.content': s('first'), 'gen_ai.prompt.0.role': s('user'), 'gen_ai.completion.0.content': s('final answer'), 'gen_ai.completion.0.role': s('assistant') }, 'gpt-4o'),
    ]
    assert.deepEqual(traceInputOutput(spans), { input: '[{"role":"user","content":"first question"}]', output: 'assistant: final answer' })
    assert.deepEqual(traceInputOutput([spans[0] as SpanDto, spans[2] as SpanDto]).input, 'user: first\nmessage: second')
  })

  it('prefers the root span’s own input and output (OpenInference, OpenLLMetry entities)', () => {
    const spans = [span('root', null, { 'input.value': s('the question'), 'traceloop.entity.output': s('the answer') }), span('a', 'root', { 'llm.prompts': s('inner') }, 'gpt-4o')]
    assert.deepEqual(traceInputOutput(spans), { input: 'the question', output: 'the answer' })
    const openInference = [span('root', null, {}), span('a', 'root', { 'llm.input_messages.0.message.role': s('user'), 'llm.input_messages.0.message.content': s('hi'), 'llm.output_messages.0.message.content': s('hello') })]
    assert.deepEqual(traceInputOutput(openInference), { input: 'user: hi', output: 'message: hello' })
  })

  it('falls back to the root’s attributes, and cuts long text', () => {
    assert.deepEqual(traceInputOutput([span('root', null, { 'http.route': s('/x') })]), { input: '{"http.route":{"stringValue":"/x"}}', output: '' })
    const long = 'x'.repeat(MAX_SIDE_CHARS + 10)
    const { input } = traceInputOutput([span('root', null, { 'input.value': s(long) })])
    assert.equal(input.length, MAX_SIDE_CHARS + ` (cut at ${MAX_SIDE_CHARS} characters)`.length + 1)
  })
})

describe('the judge’s prompt and answer', () => {
  it('fills {{input}} and {{output}}, spaces allowed, other braces left alone', () => {
    assert.equal(fillJudgePrompt('Q: {{input}} A: {{ output }} {{other}} {x}', { input: 'why $1?', output: 'because' }), 'Q: why $1? A: because {{other}} {x}')
  })

  it('fills {{expected_output}} from an experiment trace’s root, empty for other traces', () => {
    const experimentTrace = [span('root', null, { 'input.value': s('Capital of France?'), 'output.value': s('Paris.'), 'tracewell.dataset.item.expected_output': s('Paris') })]
    const io = traceInputOutput(experimentTrace)
    assert.deepEqual(io, { input: 'Capital of France?', output: 'Paris.', expectedOutput: 'Paris' })
    assert.equal(fillJudgePrompt('Expected: {{ expected_output }} Got: {{output}}', io), 'Expected: Paris Got: Paris.')
    assert.equal(fillJudgePrompt('Expected: {{expected_output}}.', { input: 'a', output: 'b' }), 'Expected: .')
  })

  it('reads {score, reasoning}, in a code fence too, and refuses anything else as retryable', () => {
    assert.deepEqual(judgmentOf('{"score": 0.5, "reasoning": "half right"}'), { score: 0.5, reasoning: 'half right' })
    assert.deepEqual(judgmentOf('```json\n{"score": "1", "reasoning": "ok"}\n```'), { score: 1, reasoning: 'ok' })
    assert.deepEqual(judgmentOf('{"score": 3}'), { score: 3, reasoning: '' })
    for (const answer of ['Score: 1', '{"score": "high"}', '{"reasoning": "no score"}', '[1]']) {
      assert.throws(() => judgmentOf(answer), (error: unknown) => error instanceof JudgeError && error.retryable, answer)
    }
  })
})
