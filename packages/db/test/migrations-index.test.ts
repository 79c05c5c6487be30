import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { describe, it } from 'node:test'
import { migrations } from '../src/migrations/index.ts'

// The list of migrations imports each one only when it runs (migrations/index.ts): a service that
// imports this package to check the schema is current must not load them, and the list must still
// name every migration, with the transaction flag its module exports.

const directory = new URL('../src/migrations/', import.meta.url)

describe('the list of migrations', { timeout: 60_000 }, () => {
  it('names every migration file, in order', () => {
    const files = readdirSync(directory).filter((name) => /^\d{4}-\d\d-\d\dT\d{4}-.+\.ts$/.test(name)).map((name) => name.slice(0, -3))
    assert.deepEqual(Object.keys(migrations), files.sort())
  })

  it('gives each migration the transaction flag its module exports', async () => {
    for (const name of Object.keys(migrations)) {
      const module = (await import(new URL(`${name}.ts`, directory).href)) as { transactional?: boolean }
      assert.equal(migrations[name]?.transactional, module.transactional, name)
    }
  })

  it('loads no migration when the package is imported', () => {
    // A child process, so that this file's own imports do not count: it records every module loaded.
    const script = `
      import { registerHooks } from 'node:module'
      const loaded = []
      registerHooks({ load(url, context, next) { if (url.includes('/migrations/')) loaded.push(url.slice(url.indexOf('/migrations/'))); return next(url, context) } })
      await import(${JSON.stringify(new URL('../src/index.ts', import.meta.url).href)})
      process.stdout.write(JSON.stringify(loaded))`
    const loaded = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[]
    assert.deepEqual(loaded.filter((url) => !url.endsWith('/index.ts') && !url.endsWith('/any-db.ts')), [])
  })
})
