import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PromptCache, type PromptsetLookup } from '../src/prompt-cache.ts'

const notFound: PromptsetLookup = { kind: 'promptset-not-found' }
const noLive: PromptsetLookup = { kind: 'no-live' }

describe('prompt cache', () => {
  it('serves a lookup until its TTL, counted from before the load, then loads again', async () => {
    let now = 1_000
    const cache = new PromptCache({ ttlMs: 5_000, now: () => now })
    assert.equal(cache.peek('set', 'project', null), undefined)
    await cache.load('set', 'project', null, async () => {
      now += 300 // a slow query
      return notFound
    })
    now = 5_999
    assert.equal(cache.peek('set', 'project', null), notFound)
    now = 6_000
    assert.equal(cache.peek('set', 'project', null), undefined)
  })

  it('shares one load among concurrent misses', async () => {
    const cache = new PromptCache({ ttlMs: 5_000 })
    let loads = 0
    const loader = async () => {
      loads++
      await new Promise((resolve) => setTimeout(resolve, 10))
      return notFound
    }
    const results = await Promise.all([cache.load('set', 'p', null, loader), cache.load('set', 'p', null, loader), cache.load('set', 'p', null, loader)])
    assert.equal(loads, 1)
    assert.deepEqual(results, [notFound, notFound, notFound])
  })

  it('drops every entry of a promptset on invalidation, and only that promptset', async () => {
    const cache = new PromptCache({ ttlMs: 5_000 })
    await cache.load('a', 'p', null, async () => noLive)
    await cache.load('a', 'p', 2, async () => notFound)
    await cache.load('b', 'p', null, async () => noLive)
    cache.invalidate('a')
    assert.equal(cache.peek('a', 'p', null), undefined)
    assert.equal(cache.peek('a', 'p', 2), undefined)
    assert.equal(cache.peek('b', 'p', null), noLive)
  })

  it('does not store a load that overlapped an invalidation (it may have read the old state)', async () => {
    const cache = new PromptCache({ ttlMs: 5_000 })
    let release: () => void = () => {}
    const pending = cache.load('a', 'p', null, () => new Promise<PromptsetLookup>((resolve) => (release = () => resolve(noLive))))
    cache.invalidate('a')
    release()
    assert.equal(await pending, noLive)
    assert.equal(cache.peek('a', 'p', null), undefined)
  })

  it('keeps at most maxPromptsets promptsets, dropping the oldest', async () => {
    const cache = new PromptCache({ ttlMs: 5_000, maxPromptsets: 2 })
    for (const id of ['a', 'b', 'c']) await cache.load(id, 'p', null, async () => noLive)
    assert.equal(cache.peek('a', 'p', null), undefined)
    assert.equal(cache.peek('c', 'p', null), noLive)
  })

  it('keeps versions, labels and the default apart, even a label named like a version', async () => {
    const cache = new PromptCache({ ttlMs: 5_000 })
    const version2: PromptsetLookup = { kind: 'version-not-found', version: 2 }
    const label2: PromptsetLookup = { kind: 'label-not-found', label: '2' }
    const production: PromptsetLookup = { kind: 'label-not-found', label: 'production' }
    let loads = 0
    const loading = (lookup: PromptsetLookup) => async () => {
      loads++
      return lookup
    }
    // Concurrent loads of different selectors are not merged into one.
    await Promise.all([cache.load('a', 'p', 2, loading(version2)), cache.load('a', 'p', '2', loading(label2)), cache.load('a', 'p', null, loading(noLive)), cache.load('a', 'p', 'production', loading(production))])
    assert.equal(loads, 4)
    assert.deepEqual([cache.peek('a', 'p', 2), cache.peek('a', 'p', '2'), cache.peek('a', 'p', null), cache.peek('a', 'p', 'production')], [version2, label2, noLive, production])
    cache.invalidate('a')
    assert.deepEqual([cache.peek('a', 'p', 2), cache.peek('a', 'p', '2'), cache.peek('a', 'p', null)], [undefined, undefined, undefined])
  })

  it('keeps at most maxSelectors lookups per promptset and project: unknown labels cannot grow it without bound', async () => {
    const cache = new PromptCache({ ttlMs: 5_000, maxSelectors: 3 })
    for (const label of ['a', 'b', 'c']) await cache.load('r', 'p', label, async () => ({ kind: 'label-not-found', label }))
    await cache.load('r', 'q', 'a', async () => notFound)
    await cache.load('r', 'p', 'c', async () => noLive) // already held: replaced, nothing dropped
    assert.deepEqual([cache.peek('r', 'p', 'a'), cache.peek('r', 'p', 'c')], [{ kind: 'label-not-found', label: 'a' }, noLive])
    await cache.load('r', 'p', 'd', async () => noLive)
    assert.deepEqual([cache.peek('r', 'p', 'a'), cache.peek('r', 'p', 'b'), cache.peek('r', 'p', 'c'), cache.peek('r', 'p', 'd')], [undefined, undefined, undefined, noLive])
    assert.equal(cache.peek('r', 'q', 'a'), notFound)
  })

  it('keeps the lookups of each project and version of a promptset apart', async () => {
    const cache = new PromptCache({ ttlMs: 5_000 })
    const version1: PromptsetLookup = { kind: 'version-not-found', version: 1 }
    await cache.load('a', 'p', null, async () => noLive)
    await cache.load('a', 'p', 1, async () => version1)
    await cache.load('a', 'q', null, async () => notFound)
    assert.deepEqual([cache.peek('a', 'p', null), cache.peek('a', 'p', 1), cache.peek('a', 'q', null)], [noLive, version1, notFound])
    assert.equal(cache.peek('a', 'q', 1), undefined)
    assert.equal(cache.peek('a', 'p', 2), undefined)
  })
})
