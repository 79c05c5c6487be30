import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

// The start scripts' hook: a module is type-stripped by the first start that loads it, and a
// later start runs the kept text without loading Node's stripper at all, in worker threads too.

const hook = fileURLToPath(new URL('../typescript-sources.hooks.mjs', import.meta.url))
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

function start(): { printed: unknown; warnings: string } {
  const warnings = join(directory, `stderr-${randomUUID()}`)
  const printed = execFileSync(process.execPath, ['--import', hook, '--redirect-warnings', warnings, join(directory, 'main.ts')], { cwd: directory, encoding: 'utf8' })
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
})
