// What bench:ingest watches in Postgres while the write path runs: how often a writer's backend
// waits on a lock, the longest statement it sees running, and the summaries' lag; and how soon a
// trace acknowledged by ingest is in the trace list's table.
import { setTimeout as sleep } from 'node:timers/promises'
import { sql, type Db } from '@tracewell/db'
import { summaryBacklog } from '@tracewell/db'
import { Pool } from 'undici'

export interface DatabaseWatch {
  samples: number
  /** Samples in which at least one backend of the bench's database waited on a lock (pg_locks / wait_event_type 'Lock'). */
  lockWaitSamples: number
  /**
   * What they waited for: the lock's kind (pg_stat_activity.wait_event: `extend` for a table or
   * index growing, `transactionid` for a row another transaction holds, `advisory`, ...), the
   * relation when it is one, and the start of the waiting statement, with the samples it was seen in.
   */
  lockWaits: Map<string, number>
  /** The longest a statement of the bench's database was seen running, in ms. */
  longestStatementMs: number
  longestStatement: string
  /** The summaries' largest lag seen, in seconds. */
  maxLagSeconds: number
}

/**
 * Samples pg_stat_activity every `everyMs` (100 ms: the measure) until stopped. The
 * sampling connection is the bench's own; its own statements are left out.
 */
export function watchDatabase(db: Db, everyMs = 100): { stop(): Promise<DatabaseWatch> } {
  const watch: DatabaseWatch = { samples: 0, lockWaitSamples: 0, lockWaits: new Map(), longestStatementMs: 0, longestStatement: '', maxLagSeconds: 0 }
  let running = true
  let lagChecked = 0
  const loop = (async () => {
    while (running) {
      const { rows } = await sql<{ waits: string[]; longest_ms: number | null; query: string | null }>`
        with others as (
          select * from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend' and state = 'active')
        select array(
            select distinct o.wait_event || coalesce(' ' || (select l.relation::regclass::text from pg_locks l where l.pid = o.pid and not l.granted and l.relation is not null limit 1), '')
              || ': ' || left(regexp_replace(o.query, '[[:space:]]+', ' ', 'g'), 40)
            from others o where o.wait_event_type = 'Lock') as waits,
          (select extract(epoch from now() - query_start) * 1000 from others order by query_start limit 1)::float8 as longest_ms,
          (select left(query, 80) from others order by query_start limit 1) as query`.execute(db)
      const row = rows[0]
      watch.samples++
      if ((row?.waits.length ?? 0) > 0) watch.lockWaitSamples++
      for (const wait of row?.waits ?? []) watch.lockWaits.set(wait, (watch.lockWaits.get(wait) ?? 0) + 1)
      if ((row?.longest_ms ?? 0) > watch.longestStatementMs) {
        watch.longestStatementMs = row?.longest_ms ?? 0
        watch.longestStatement = (row?.query ?? '').replace(/\s+/g, ' ')
      }
      if (Date.now() - lagChecked >= 500) {
        lagChecked = Date.now()
        watch.maxLagSeconds = Math.max(watch.maxLagSeconds, (await summaryBacklog(db)).lagSeconds)
      }
      await sleep(everyMs)
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return watch
    },
  }
}

/** Waits until every stored batch is folded into the summaries (or `limitSeconds` pass); answers whether it was. */
export async function waitSummarised(db: Db, elapsed: () => number, limitSeconds: number, pollMs = 25): Promise<boolean> {
  for (;;) {
    const { rows } = await sql<{ waiting: boolean }>`select exists (select 1 from summary_deltas) as waiting`.execute(db)
    if (rows[0]?.waiting === false) return true
    if (elapsed() > limitSeconds) return false
    await sleep(pollMs)
  }
}

/** The lock waits of some watches, most seen first: `extend: copy spans (…) ×7, …`. */
export function lockWaitsSeen(watches: readonly DatabaseWatch[]): string {
  const seen = new Map<string, number>()
  for (const watch of watches) for (const [wait, samples] of watch.lockWaits) seen.set(wait, (seen.get(wait) ?? 0) + samples)
  if (seen.size === 0) return 'none'
  return [...seen].sort(([, a], [, b]) => b - a).map(([wait, samples]) => `${wait} ×${samples}`).join('; ')
}

export interface Freshness {
  traces: number
  p50Ms: number
  p99Ms: number
  maxMs: number
  missing: number
}

/**
 * Sends one-span traces at a steady `rate` for `seconds` and measures, for each one ingest
 * acknowledged, the time from the 200 until its row is in trace_summaries (what GET /api/traces,
 * its session and usage read), polling every 50 ms.
 */
export async function measureFreshness(db: Db, url: string, headers: Record<string, string>, body: () => string, rate: number, seconds: number): Promise<Freshness> {
  const target = new URL(url)
  const pool = new Pool(target.origin, { connections: 16 })
  const acknowledged = new Map<string, number>()
  const seen = new Map<string, number>()
  let sending = true
  let lastAck = performance.now()
  const poller = (async () => {
    while (sending || seen.size < acknowledged.size) {
      const pending = [...acknowledged.keys()].filter((traceId) => !seen.has(traceId))
      if (pending.length > 0) {
        const { rows } = await sql<{ trace_id: string }>`select trace_id from trace_summaries where trace_id = any(${pending}::text[])`.execute(db)
        const now = performance.now()
        for (const row of rows) seen.set(row.trace_id, now)
      }
      if (!sending && performance.now() - lastAck > 30_000) break
      await sleep(50)
    }
  })()
  const started = performance.now()
  const requests: Promise<void>[] = []
  for (let i = 0; i < rate * seconds; i++) {
    const due = started + (i * 1000) / rate
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    const text = body()
    const traceId = /"traceId":"([0-9a-f]{32})"/.exec(text)?.[1] as string
    requests.push(
      pool
        .request({ method: 'POST', path: target.pathname, headers: { 'content-type': 'application/json', ...headers }, body: text })
        .then(async (response) => {
          await response.body.dump()
          if (response.statusCode === 200) acknowledged.set(traceId, (lastAck = performance.now()))
        }),
    )
  }
  await Promise.all(requests)
  sending = false
  await poller
  await pool.close()
  const delays = [...acknowledged].filter(([traceId]) => seen.has(traceId)).map(([traceId, at]) => (seen.get(traceId) as number) - at).sort((a, b) => a - b)
  const at = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))] ?? Number.NaN
  return { traces: acknowledged.size, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: delays.at(-1) ?? Number.NaN, missing: acknowledged.size - delays.length }
}
