import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

// The start scripts' hook: a module is type-stripped by the first start that loads it, and a
// later start runs the kept text without loading Node's stripper at all, in worker threads too.

const hook = fileURLToPath(new URL('../typescript-sources.hooks.mjs', import.meta.url))
const keptDirectory = fileURLToPath(new URL('../../../node_modules/.cache/stripped-typescript/', import.meta.url))
const directory = mkdtempSync(join(tmpdir(), 'typescript-sources-'))
after(() => rmSync(directory, { recursive: true, force: true }))

writeFileSync(join(directory, 'package.json'), '{ "type": "module" }')
// Sources no earlier run has stripped: the first start below cannot find them kept.
const unseen = `// ${randomUUID()}`
writeFileSync(join(directory, 'answer.ts'), `${unseen}\ninterface Answer { value: number }\nexport const answer: Answer = { value: 42 as number }\n`)
writeFileSync(
  join(directory, 'main.ts'),
  [
    unseen,
    "import { Worker } from 'node:worker_threads'",
    "import { answer } from './answer.ts'",
    "const stripper = (): boolean => process.moduleLoadList.some((name: string) => name.includes('amaro'))",
    "const worker = new Worker(new URL('./worker.ts', import.meta.url))",
    "worker.once('message', (inWorker: { value: number; stripper: boolean }) => {",
    '  console.log(JSON.stringify({ value: answer.value, stripper: stripper(), inWorker }))',
    '  void worker.terminate()',
    '})',
  ].join('\n'),
)
writeFileSync(
  join(directory, 'worker.ts'),
  [
    unseen,
    "import { parentPort } from 'node:worker_threads'",
    "import { answer } from './answer.ts'",
    "parentPort!.postMessage({ value: answer.value as number, stripper: process.moduleLoadList.some((name: string) => name.includes('amaro')) })",
  ].join('\n'),
)

// Characters past Latin-1 wherever JavaScript allows them — a comment, strings, a template, regular
// expressions, an identifier, an escaped one — and what each must still mean once kept escaped.
writeFileSync(
  join(directory, 'wide.ts'),
  [
    unseen,
    '// An em dash — in a comment, and an emoji 🙂.',
    "const café_π: string = 'π'",
    'export const values = {',
    "  dash: '—',",
    "  escapedDash: '\\—',",
    "  backslashThenDash: '\\\\—',",
    '  template: `a → ${café_π}`,',
    "  emoji: '🙂'.length,",
    "  classMatches: /^[–—]+$/.test('—–'),",
    "  unicodeMatches: /^🙂$/u.test('🙂'),",
    '}',
  ].join('\n'),
)
// A line separator outside a string is whitespace: escaped it would not be, so the file is kept as is.
writeFileSync(join(directory, 'separator.ts'), `${unseen}\nexport const separated: number =\u2028 1 + 1\n`)

function start(main = 'main.ts'): { printed: unknown; warnings: string } {
  const warnings = join(directory, `stderr-${randomUUID()}`)
  const printed = execFileSync(process.execPath, ['--import', hook, '--redirect-warnings', warnings, join(directory, main)], { cwd: directory, encoding: 'utf8' })
  return { printed: JSON.parse(printed) as unknown, warnings: existsSync(warnings) ? readFileSync(warnings, 'utf8') : '' }
}

describe('typescript-sources hook', () => {
  it('strips a module once, and a later start runs it without the stripper, in workers too', () => {
    const first = start()
    assert.deepEqual(first.printed, { value: 42, stripper: true, inWorker: { value: 42, stripper: true } })
    assert.equal(first.warnings, '', 'stripping through the hook says nothing a plain start would not')
    const later = start()
    assert.deepEqual(later.printed, { value: 42, stripper: false, inWorker: { value: 42, stripper: false } })
  })

  it('keeps a source past Latin-1 escaped, meaning the same, so that V8 holds it a byte a character', () => {
    writeFileSync(
      join(directory, 'wide-main.ts'),
      [unseen, "import { values } from './wide.ts'", "import { separated } from './separator.ts'", 'console.log(JSON.stringify({ values, separated }))'].join('\n'),
    )
    const expected = {
      values: { dash: '—', escapedDash: '—', backslashThenDash: '\\—', template: 'a → π', emoji: 2, classMatches: true, unicodeMatches: true },
      separated: 2,
    }
    assert.deepEqual(start('wide-main.ts').printed, expected)
    assert.deepEqual(start('wide-main.ts').printed, expected, 'read back as kept')
    const kept = readdirSync(keptDirectory)
      .map((name) => readFileSync(join(keptDirectory, name), 'utf8'))
      .filter((text) => text.startsWith(unseen))
    const wide = kept.find((text) => text.includes('export const values'))
    assert.ok(wide !== undefined && !/[\u0100-\uffff]/.test(wide), 'the kept text is Latin-1')
    assert.equal(wide.split('\n').length, readFileSync(join(directory, 'wide.ts'), 'utf8').split('\n').length, 'lines are kept where they were')
    assert.ok(kept.some((text) => text.includes('\u2028')), 'the source with a line separator is kept as it was')
  })
})
