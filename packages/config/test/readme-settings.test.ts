import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { it } from 'node:test'
import { AllInOneConfigSchema, ControlPlaneConfigSchema, IngestConfigSchema, JanitorConfigSchema, ReplayConfigSchema, WriterConfigSchema } from '../src/index.ts'

it('documents every setting in the README settings table', () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8')
  const documented = new Set([...readme.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((match) => String(match[1])))
  const settings = new Set(
    [AllInOneConfigSchema, IngestConfigSchema, WriterConfigSchema, ControlPlaneConfigSchema, JanitorConfigSchema, ReplayConfigSchema].flatMap((schema) =>
      Object.keys(schema.properties),
    ),
  )
  assert.deepEqual([...settings].filter((name) => !documented.has(name)), [], 'settings missing from the README')
  assert.deepEqual([...documented].filter((name) => !settings.has(name)), [], 'README rows for settings that do not exist')
})
