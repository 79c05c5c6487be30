import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import postcss from 'postcss'

// The console's one stylesheet is plain CSS, without nesting: a rule left unclosed (a merge that
// cut a closing brace) makes browsers read every later rule as nested in it, so those rules style
// nothing, and no build step says so. This reads it as the browser would and fails instead.

const stylesheet = readFileSync(new URL('../src/styles.css', import.meta.url), 'utf8')

describe('the stylesheet', () => {
  it('closes every block and nests no rule inside another rule', () => {
    const root = postcss.parse(stylesheet, { from: 'src/styles.css' })
    const nested: string[] = []
    root.walkRules((rule) => {
      if (rule.parent?.type === 'rule') nested.push(`${rule.selector} (line ${rule.source?.start?.line}) inside ${(rule.parent as postcss.Rule).selector}`)
    })
    assert.deepEqual(nested, [])
  })
})
