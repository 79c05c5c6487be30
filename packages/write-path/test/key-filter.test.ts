import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KeyFilter } from '../src/key-filter.ts'

// The summariser finds a trace's row of a sealed day only if that day's filter says "maybe": a
// filter that forgot a key would give the trace a second row, one that says "maybe" too often
// only costs index probes.

describe('key filter', { timeout: 30_000 }, () => {
  it('says maybe for every key added, and no for nearly every other', () => {
    const added = Array.from({ length: 20_000 }, (_, i) => `t\u0000project\u0000${i.toString(16).padStart(32, '0')}`)
    const filter = new KeyFilter(added.length)
    for (const key of added) filter.add(key)
    for (const key of added) assert.equal(filter.mayHave(key), true, key)
    let falsePositives = 0
    for (let i = 0; i < 20_000; i++) if (filter.mayHave(`t\u0000project\u0000${(i + 1_000_000).toString(16).padStart(32, '0')}`)) falsePositives++
    assert.ok(falsePositives < 400, `${falsePositives} of 20,000 absent keys said maybe`)
  })

  it('an empty day says no', () => {
    assert.equal(new KeyFilter(0).mayHave('s\u0000p\u0000chat'), false)
  })
})
