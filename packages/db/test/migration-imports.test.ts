import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'
import { ESLint } from 'eslint'

// Migrations are frozen in time: the repository's lint rule (eslint.config.js) lets them import
// kysely, node's own modules and their frozen copies only. Linted here with the real config, so
// the rule is shown to fail, not only to pass.

const root = fileURLToPath(new URL('../../../', import.meta.url))
const migrations = fileURLToPath(new URL('../src/migrations/', import.meta.url))
const eslint = new ESLint({ cwd: root })

async function restrictedImports(code: string, file = `${migrations}2099-01-01T0000-example.ts`): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: file })
  return (result?.messages ?? []).filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message)
}

describe('imports of migrations', () => {
  it('every migration and frozen copy passes the rule', async () => {
    const results = await eslint.lintFiles([migrations])
    const restricted = results.flatMap((result) => result.messages.filter((message) => message.ruleId === 'no-restricted-imports').map((message) => `${result.filePath}: ${message.message}`))
    assert.deepEqual(restricted, [])
    assert.ok(results.length > 26, `linted ${results.length} files`)
  })

  for (const source of ['@tracewell/llm-usage', '@tracewell/text-filter', '../create-db.ts', '../repositories/text-blocks.repository.ts', './frozen/../../index.ts', 'pg']) {
    it(`refuses an import of ${source}`, async () => {
      const messages = await restrictedImports(`import { x } from '${source}'\nexport const y = x\n`)
      assert.equal(messages.length, 1, `no restriction reported for ${source}`)
      assert.match(messages[0] as string, /Migrations import only kysely, node: built-ins and their frozen copies/)
    })
  }

  it('refuses a type-only import of another package too', async () => {
    assert.equal((await restrictedImports(`import type { Db } from '@tracewell/db'\nexport type X = Db\n`)).length, 1)
  })

  it('lets kysely, node: built-ins and the frozen copies through', async () => {
    const code = [
      `import { sql } from 'kysely'`,
      `import { join } from 'node:path'`,
      `import { TextFilterWords } from './frozen/text-filter-2026-11-27/text-filter.ts'`,
      `export const used = [sql, join, TextFilterWords]`,
    ].join('\n')
    assert.deepEqual(await restrictedImports(code), [])
  })
})
