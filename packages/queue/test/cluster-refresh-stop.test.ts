import assert from 'node:assert/strict'
import { once } from 'node:events'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { OwnRedisCluster } from '@tracewell/test-support'
import type { Cluster } from 'ioredis'
import { createSpanBatchQueueConnection } from '../src/redis-connection.ts'

// A cluster client closed while its periodic slot refresh was in flight went on refreshing every
// 2 s forever (ioredis 6.0.0), and its timer kept the process alive: a test file that never exited.

describe('a cluster client closed during its slot refresh', { timeout: 60_000 }, () => {
  const cluster = new OwnRedisCluster({ basePort: 7130, masters: 3 })
  before(() => cluster.start())
  after(() => cluster.stop())

  it('stops refreshing once it has ended', async () => {
    const client = createSpanBatchQueueConnection({ clusterNodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })) }, 'worker') as Cluster
    await once(client, 'ready')
    // The first refresh after ready is the periodic one (slotsRefreshInterval, 2 s): closed from its
    // 'refresh' event, the client ends while that refresh's callback has yet to run.
    client.once('refresh', () => client.disconnect())
    await once(client, 'end')
    const refreshing = client as unknown as { slotsTimer: NodeJS.Timeout | null; clearNodesRefreshInterval(): void }
    try {
      // Past two more rounds of the interval: a client still refreshing holds a timer by now, and
      // it must not be one that keeps the process alive.
      await sleep(4_500)
      const refreshTimer = refreshing.slotsTimer
      assert.ok(refreshTimer === null || !refreshTimer.hasRef(), 'the closed client holds a slot refresh timer that keeps the process alive')
    } finally {
      // So that this file exits even when the assertion fails.
      refreshing.clearNodesRefreshInterval()
    }
  })
})
