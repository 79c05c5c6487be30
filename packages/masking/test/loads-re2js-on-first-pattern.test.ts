import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { it } from 'node:test'

// re2js is loaded by the first custom pattern, not with the package (compile-rules.ts): every
// service imports masking through its settings, and an idle one should not hold a regex engine.
it('loads re2js with the first regex rule, not with the package', () => {
  const script = `
    import { createRequire } from 'node:module'
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('/re2js/'))
    const { maskerOf } = await import(${JSON.stringify(new URL('../src/index.ts', import.meta.url).href)})
    const before = loaded()
    maskerOf([{ detector: 'email' }])
    const withBuiltIn = loaded()
    const masked = maskerOf([{ detector: 'regex', pattern: 'ACCT-[0-9]+' }]).maskText('paid from ACCT-123456')
    console.log(JSON.stringify({ before, withBuiltIn, after: loaded(), masked }))`
  const printed = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  assert.deepEqual(JSON.parse(printed), { before: false, withBuiltIn: false, after: true, masked: 'paid from [REDACTED:regex]' })
})
