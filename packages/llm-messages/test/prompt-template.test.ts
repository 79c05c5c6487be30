import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compileTemplate, extractVariables, fillTemplate, missingVariables } from '../src/prompt-template.ts'

const fill = (value: string, declared: string[], values: Record<string, string>) =>
  fillTemplate(compileTemplate(value, declared), new Map(Object.entries(values)))

describe('prompt templates', () => {
  it('finds placeholder names of all three syntaxes, distinct, in order of first appearance', () => {
    assert.deepEqual(extractVariables('Hi ${name}, {{ city }} and {country}; ${name} again, {{city}}'), ['name', 'city', 'country'])
    assert.deepEqual(extractVariables('no placeholders, {"json": 1}, { spaced }, ${}, {1digit}'), [])
    assert.deepEqual(extractVariables('${user.first_name} {a-b}'), ['user.first_name', 'a-b'])
  })

  it('fills ${name}, {{name}} and {name} of declared variables only', () => {
    assert.equal(fill('${a}|{{a}}|{{ a }}|{a}|${b}|{b}', ['a'], { a: 'X', b: 'Y' }), 'X|X|X|X|${b}|{b}')
  })

  it('inserts values verbatim, in one pass: a value that looks like a placeholder is not evaluated', () => {
    assert.equal(fill('${a} ${b}', ['a', 'b'], { a: '${b}', b: '{{a}}' }), '${b} {{a}}')
    assert.equal(fill('${a}', ['a'], { a: '$& $1 $$ \\n' }), '$& $1 $$ \\n')
  })

  it('keeps the text around and between placeholders, including a value at either end', () => {
    assert.equal(fill('${a}', ['a'], { a: 'only' }), 'only')
    assert.equal(fill('${a}${a}', ['a'], { a: 'x' }), 'xx')
    assert.equal(fill('start ${a} end', ['a'], { a: 'ünïcødé 😀' }), 'start ünïcødé 😀 end')
    assert.equal(fill('nothing declared ${a}', [], { a: 'x' }), 'nothing declared ${a}')
  })

  it('reports absent and empty declared variables in declared order', () => {
    const template = compileTemplate('${a} ${b} ${c}', ['c', 'a', 'b'])
    assert.deepEqual(missingVariables(template, new Map([['b', 'x'], ['a', '']])), ['c', 'a'])
    assert.deepEqual(missingVariables(template, new Map([['a', '1'], ['b', '2'], ['c', '3'], ['extra', '4']])), [])
  })

  it('requires declared variables that do not appear in the value, without failing to fill', () => {
    const template = compileTemplate('plain', ['unused'])
    assert.deepEqual(missingVariables(template, new Map()), ['unused'])
    assert.equal(fillTemplate(template, new Map([['unused', 'x']])), 'plain')
  })
})
