import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { it } from 'node:test'
import { pastedOutputLines } from '@tracewell/test-support'
import { llmAttributeMap, operationTranslations, vendorAliases, type AttributeSource, type LlmColumn } from '../src/index.ts'

// docs/semantic-conventions.md shows the mapping table, the vendor names and the operation
// translations; they are written out from the code here and must appear there verbatim.

const storedColumn: Record<LlmColumn, string> = {
  vendor: 'llm_vendor', requestModel: 'llm_model', responseModel: 'llm_response_model', operation: 'llm_request_type',
  inputTokens: 'input_tokens', outputTokens: 'output_tokens', totalTokens: 'total_tokens', cachedInputTokens: 'cached_input_tokens',
  cacheWriteInputTokens: 'cache_write_input_tokens', reasoningTokens: 'reasoning_tokens', sessionId: 'session_id', userId: 'user_id',
  inputCostUsd: 'input_cost_usd', outputCostUsd: 'output_cost_usd', totalCostUsd: 'total_cost_usd',
}

export function mappingTable(): string {
  const lines = ['| column | rank | attribute | sent by | read as |', '|---|---|---|---|---|']
  for (const column of Object.keys(llmAttributeMap) as LlmColumn[]) {
    llmAttributeMap[column].forEach((source: AttributeSource<unknown>, rank: number) => {
      lines.push(`| ${rank === 0 ? `\`${storedColumn[column]}\`` : ''} | ${rank + 1} | \`${source.key}\` | ${source.from.join(', ')} | ${source.note ?? 'as sent'} |`)
    })
  }
  return lines.join('\n')
}

export function vendorTable(): string {
  return ['| reported (lowercase; or its first dot-separated parts) | stored |', '|---|---|', ...vendorAliases.map(([alias, canonical]) => `| \`${alias}\` | \`${canonical}\` |`)].join('\n')
}

export function operationTable(): string {
  const lines = ['| attribute | reported | stored |', '|---|---|---|']
  for (const [attribute, translations] of Object.entries(operationTranslations)) {
    for (const [reported, stored] of Object.entries(translations)) lines.push(`| \`${attribute}\` | \`${reported}\` | \`${stored}\` |`)
  }
  return lines.join('\n')
}

it('docs/semantic-conventions.md shows the mapping table, vendor names and operations as the code has them', () => {
  const docs = readFileSync(new URL('../../../docs/semantic-conventions.md', import.meta.url), 'utf8')
  for (const [name, table] of [['mapping', mappingTable()], ['vendor', vendorTable()], ['operation', operationTable()]] as const) {
    assert.ok(docs.includes(table), `the ${name} table in docs/semantic-conventions.md differs from the code; it should read:\n${table}`)
  }
  assert.deepEqual(pastedOutputLines(docs), [], 'docs/semantic-conventions.md holds pasted test-runner output')
})

it('finds pasted test-runner output, as the kind once pasted into docs/semantic-conventions.md', () => {
  const pasted = [
    '| `openinference.span.kind` | `AGENT` | `invoke_agent` |',
    '✖ docs/semantic-conventions.md shows the mapping table (5.72ms)',
    'ℹ tests 1',
    'not ok 1 - shows the table',
    '  AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:',
    '      at TestContext.<anonymous> (file:///work/packages/llm-usage/test/docs.test.ts:39:16)',
    '      at Test.run (node:internal/test_runner/test:1402:25)',
    "    code: 'ENOENT',",
  ].join('\n')
  assert.deepEqual(pastedOutputLines(pasted).map((line) => line.split(':')[0]), ['line 2', 'line 3', 'line 4', 'line 5', 'line 6', 'line 7', 'line 8'])
  assert.deepEqual(pastedOutputLines('Text that says ok 1 thing, at last (see docs/api.md).\n- not a list of results'), [])
})
