import { createDb, metricSeries } from '@tracewell/db'
const db = createDb({ databaseUrl: 'postgres://postgres@127.0.0.1:48300/seed_main', poolSize: 2 })
const projectId = '25ba626a-83c4-4284-b000-a1e299afd5c9'
for (let i = 0; i < 3; i++) {
const now = Date.now()
const from = new Date(now - 30 * 86400000)
const t0 = performance.now()
const fast = await metricSeries(db, { projectId, metric: 'users', groupBy: 'session', from, to: new Date(now) })
console.log((performance.now() - t0).toFixed(0), fast.series.length)
}
await db.destroy()
