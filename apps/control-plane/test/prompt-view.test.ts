import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { PromptDto, PromptsetDto } from '@tracewell/db'
import { fillTemplate } from '@tracewell/llm-messages'
import { declaredValues, filledJson, missingValues, toPromptView } from '../src/prompt-view.ts'
import { seededRandom } from '@tracewell/test-support'

const promptset: PromptsetDto = {
  id: 'registry-1',
  name: 'support "desk"',
  description: 'line\nbreak',
  projectId: 'project-1',
  createdAt: '2026-01-02T03:04:05.000Z',
  updatedAt: '2026-01-02T03:04:06.000Z',
}

function promptOf(value: string, variables: string[]): PromptDto {
  return {
    id: 'prompt-1',
    value,
    variables,
    model: 'gpt-4o-mini',
    modelSettings: { temperature: 0.2 },
    version: 3,
    live: true,
    labels: ['production', 'staging'],
    tags: ['a'],
    spanId: null,
    note: '',
    promptsetId: promptset.id,
    createdAt: '2026-01-02T03:04:07.000Z',
    updatedAt: '2026-01-02T03:04:08.000Z',
  }
}

/**
 * What the body must be: the promptset with the prompt (value as given), serialised in one piece,
 * in the SDKs' shape (docs/api.md#get-a-prompt): a version's labels are the management API's, not part of it.
 */
function expectedBody(value: string, variables: string[]): string {
  const { labels: _labels, ...prompt } = promptOf(value, variables)
  return JSON.stringify({ ...promptset, prompts: [prompt] })
}

// Text that JSON has to escape, or that looks like a placeholder, at every position.
const awkward = ['"', '\\', '\n', '\t', '\u0000', '\u001f', '\u2028', '\u007f', 'ü', '😀', '${a}', '{{b}}', '%41', '+', '&', ' ']

/** Random awkward text from a seed, so a failure names a seed that reproduces it. */
function generator(seed: number) {
  const next = seededRandom(seed)
  return { text: (length: number) => Array.from({ length }, () => awkward[Math.floor(next() * awkward.length)] as string).join('') }
}

describe('prompt views', () => {
  it('serialise the unfilled prompt exactly as JSON.stringify would', () => {
    const value = 'Hi ${a}, "quoted" \\ {{ b }}\n'
    assert.equal(toPromptView(promptset, promptOf(value, ['a', 'b'])).unfilledJson, expectedBody(value, ['a', 'b']))
  })

  it('fill placeholders into JSON text equal to serialising the filled value in one piece', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const random = generator(seed)
      const value = `${random.text(3)}\${a}${random.text(2)}{{ b }}{a}${random.text(4)}\${undeclared}`
      const view = toPromptView(promptset, promptOf(value, ['a', 'b']))
      const values = [random.text(5), random.text(3)]
      const filled = fillTemplate(view.template, new Map([['a', values[0] as string], ['b', values[1] as string]]))
      assert.equal(filledJson(view, values), expectedBody(filled, ['a', 'b']), `seed ${seed}`)
      assert.equal(view.unfilledJson, expectedBody(value, ['a', 'b']), `seed ${seed}`)
    }
  })

  it('escape lone surrogates, which JSON.stringify writes as \\u escapes', () => {
    const view = toPromptView(promptset, promptOf('${a}|${b}', ['a', 'b']))
    const body = filledJson(view, ['\ud800', 'x\udfffy'])
    assert.match(body, /"value":"\\ud800\|x\\udfffy"/)
    assert.equal((JSON.parse(body) as { prompts: { value: string }[] }).prompts[0]?.value, '\ud800|x\udfffy')
  })

  it('read the declared variables by name, in declared order, and say when none was given', () => {
    const view = toPromptView(promptset, promptOf('${x} ${y} ${z}', ['z', 'x', 'y']))
    const query = (entries: Record<string, unknown>) => Object.assign(Object.create(null) as Record<string, unknown>, entries)
    assert.deepEqual(declaredValues(view, query({ 'variables.x': '1', 'variables.z': '3', 'variables.y': '2', 'variables.extra': 'e' })), ['3', '1', '2'])
    assert.deepEqual(declaredValues(view, query({ 'variables.x': '1', 'variables.y': '' })), ['', '1', ''])
    assert.equal(declaredValues(view, query({ promptset_id: 'r' })), undefined)
    // Only an undeclared variable: variables were given, so every declared one is missing.
    const onlyExtra = declaredValues(view, query({ 'variables.extra': 'e' }))
    assert.deepEqual(onlyExtra, ['', '', ''])
    assert.deepEqual(missingValues(view, onlyExtra ?? []), ['z', 'x', 'y'])
    assert.deepEqual(missingValues(view, ['3', '', '2']), ['x'])
  })
})
