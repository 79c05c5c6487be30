import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { it } from 'node:test'
import type { TObject } from '@sinclair/typebox'
import {
  AllInOneConfigSchema,
  ControlPlaneConfigSchema,
  EvaluatorConfigSchema,
  IngestConfigSchema,
  JanitorConfigSchema,
  MigrateConfigSchema,
  ReplayConfigSchema,
  WriterConfigSchema,
} from '../src/index.ts'

// docs/settings.md is the one table of settings; these checks keep it true to the schemas, so a
// setting cannot be added, dropped, moved to another service or given a new default unseen.

/** Who reads which schema, named as the table's "used by" column names them, in its order. */
const readers: Array<[string, TObject]> = [
  ['ingest', IngestConfigSchema],
  ['writer', WriterConfigSchema],
  ['control-plane', ControlPlaneConfigSchema],
  ['janitor', JanitorConfigSchema],
  ['evaluator', EvaluatorConfigSchema],
  ['npm start', AllInOneConfigSchema],
  ['migrate', MigrateConfigSchema],
  ['queue:replay', ReplayConfigSchema],
]

interface Row {
  usedBy: string
  fallback: string
}

function documentedRows(): Map<string, Row> {
  const doc = readFileSync(new URL('../../../docs/settings.md', import.meta.url), 'utf8')
  const rows = new Map<string, Row>()
  for (const match of doc.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| ([^|]*) \| ([^|]*) \| [^|]* \|$/gm)) {
    rows.set(String(match[1]), { usedBy: String(match[2]), fallback: String(match[3]) })
  }
  return rows
}

/** The "default" cell a setting must have: its default, who requires it, or a dash. */
function expectedFallback(name: string, users: Array<[string, TObject]>): string {
  const defaults = users.map(([reader, schema]) => [reader, (schema.properties[name] as { default?: unknown }).default] as const)
  const given = defaults.filter(([, fallback]) => fallback !== undefined)
  if (given.length > 0) {
    const distinct = new Set(given.map(([, fallback]) => String(fallback)))
    if (distinct.size === 1 && given.length === users.length) return `\`${[...distinct][0]}\``
    return given.map(([reader, fallback]) => `\`${String(fallback)}\` ${reader}`).join(', ')
  }
  const requiredBy = users.filter(([, schema]) => schema.required?.includes(name)).map(([reader]) => reader)
  return requiredBy.length > 0 ? `required by ${requiredBy.join(', ')}` : '—'
}

it('documents every setting in docs/settings.md, with who reads it and its default', () => {
  const rows = documentedRows()
  const settings = new Set(readers.flatMap(([, schema]) => Object.keys(schema.properties)))
  assert.deepEqual([...settings].filter((name) => !rows.has(name)), [], 'settings missing from docs/settings.md')
  assert.deepEqual([...rows.keys()].filter((name) => !settings.has(name)), [], 'docs/settings.md rows for settings that do not exist')

  for (const name of settings) {
    const users = readers.filter(([, schema]) => name in schema.properties)
    const row = rows.get(name)
    assert.deepEqual(row, { usedBy: users.map(([reader]) => reader).join(', '), fallback: expectedFallback(name, users) }, name)
  }
})
