import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { inputText, promptMessages, variablesOfInput } from '../src/prompt-messages.ts'

describe('prompt messages', () => {
  it('sends a text prompt as one user message, its variables filled', () => {
    assert.deepEqual(promptMessages('Capital of {{country}}?', ['country'], new Map([['country', 'France']])), [{ role: 'user', content: 'Capital of France?' }])
  })

  it('fills each message of a chat prompt, values with quotes and newlines kept whole', () => {
    const value = JSON.stringify([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Q: ${question}' }])
    assert.deepEqual(promptMessages(value, ['question'], new Map([['question', 'say "hi"\nnow']])), [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Q: say "hi"\nnow' },
    ])
    // JSON that is not a list of {role, content} is text.
    assert.deepEqual(promptMessages('[1, 2] {x}', ['x'], new Map([['x', 'y']])), [{ role: 'user', content: '[1, 2] y' }])
    assert.deepEqual(promptMessages('[{"role":"wizard","content":"a"}]', [], new Map()), [{ role: 'user', content: '[{"role":"wizard","content":"a"}]' }])
  })

  it('takes variables from an item input: its keys, and input for the whole', () => {
    assert.deepEqual([...variablesOfInput({ country: 'France', facts: { pop: 68 }, none: null })], [['country', 'France'], ['facts', '{"pop":68}'], ['input', '{"country":"France","facts":{"pop":68},"none":null}']])
    assert.deepEqual([...variablesOfInput('plain question')], [['input', 'plain question']])
    assert.deepEqual([...variablesOfInput({ input: 'mine' })], [['input', 'mine']])
    assert.equal(inputText([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'first' }, { role: 'assistant', content: 'x' }, { role: 'user', content: 'last' }]), 'last')
    assert.equal(inputText(42), '42')
  })
})
