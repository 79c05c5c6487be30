import { Cluster } from 'ioredis'

// ioredis 6.0.0 refreshes a cluster client's slot map every slotsRefreshInterval with a timer that
// each refresh's callback sets again, whatever became of the client meanwhile. A client closed
// while such a refresh was in flight goes on refreshing (failing at once, with no nodes left) every
// 2 s forever, and that referenced timer keeps the process alive after everything else has closed
// (seen as a test file that never exited after a master was killed and its clients closed). BullMQ
// makes clients of its own from ours (duplicate()), so the fix goes on the class: the timer a
// refresh sets never holds the process open by itself (a live client's sockets do that), and it
// is cleared once the client has ended.

interface RefreshingCluster {
  status: string
  slotsTimer: NodeJS.Timeout | null
  clearNodesRefreshInterval(): void
}

const refreshSlotsCache = Cluster.prototype.refreshSlotsCache
Cluster.prototype.refreshSlotsCache = function (this: Cluster, callback?: (error?: Error | null) => void): void {
  if (callback === undefined) return refreshSlotsCache.call(this)
  refreshSlotsCache.call(this, (error?: Error | null) => {
    callback(error)
    const cluster = this as unknown as RefreshingCluster
    if (cluster.status === 'end') cluster.clearNodesRefreshInterval()
    else cluster.slotsTimer?.unref()
  })
}
