import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ProjectShares, shardIndexOf, shardSlot, spanBatchShards } from '../src/index.ts'

describe('span-batch shards', () => {
  it('keeps the unsharded key layout for one shard on one Redis', () => {
    assert.deepEqual(spanBatchShards({ prefix: 'tracewell', count: 1, cluster: false }), [{ index: 0, prefix: 'tracewell' }])
  })

  it('gives every shard a hash tag in the middle of its share of the slots, on a cluster even for one shard', () => {
    assert.match(spanBatchShards({ prefix: 'tracewell', count: 1, cluster: true })[0]?.prefix ?? '', /^\{tracewell-0(-\d+)?\}$/)
    for (const count of [2, 3, 6, 16, 256]) {
      const shards = spanBatchShards({ prefix: 'tw', count, cluster: true })
      const share = 16_384 / count
      for (const shard of shards) {
        assert.ok(Math.abs(shardSlot(shard) - share * (shard.index + 0.5)) <= Math.max(1, share / 16), `${count} shards: shard ${shard.index} at slot ${shardSlot(shard)}`)
      }
      // Three equal masters (0–5460, 5461–10922, 10923–16383) each get a third of the shards.
      if (count % 3 === 0) {
        const perMaster = [0, 0, 0]
        for (const shard of shards) perMaster[Math.min(2, Math.floor(shardSlot(shard) / 5461.34))]!++
        assert.deepEqual(perMaster, [count / 3, count / 3, count / 3])
      }
    }
  })

  it('sends a project to the same shard every time, and projects to every shard', () => {
    assert.equal(shardIndexOf('project-a', 8), shardIndexOf('project-a', 8))
    assert.equal(shardIndexOf('project-a', 1), 0)
    const used = new Set(Array.from({ length: 200 }, (_, i) => shardIndexOf(`project-${i}`, 8)))
    assert.equal(used.size, 8)
  })
})

describe('project shares of the backlog', () => {
  it('refuses the flooding project at 1/n of the bound and never the one sending a trickle', () => {
    const shares = new ProjectShares(5_000)
    const now = 1_000_000
    for (let i = 0; i < 100; i++) {
      shares.admitted('flood', 1_000, now + i)
      if (i % 10 === 0) shares.admitted('trickle', 2, now + i)
    }
    assert.equal(shares.overShare('flood', 40_000, 100_000, now + 100), null, 'below half the bound')
    assert.deepEqual(shares.overShare('flood', 60_000, 100_000, now + 100), { held: 59_988, share: 50_000 })
    assert.equal(shares.overShare('trickle', 99_000, 100_000, now + 100), null)
  })

  it('lets a project alone use the whole queue, and forgets projects that stopped sending', () => {
    const shares = new ProjectShares(1_000)
    shares.admitted('a', 5_000, 0)
    assert.equal(shares.overShare('a', 99_000, 100_000, 10), null, 'alone: only QUEUE_MAX_BACKLOG bounds it')
    shares.admitted('b', 2_000, 0)
    assert.ok(shares.overShare('a', 99_000, 100_000, 10))
    // b stops; a keeps sending: after a minute b's weight has decayed away and a is alone again.
    shares.admitted('a', 5_000, 60_000)
    assert.equal(shares.overShare('a', 99_000, 100_000, 60_000), null)
  })
})
