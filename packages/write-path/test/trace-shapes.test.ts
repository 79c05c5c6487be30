import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { deleteSummariesOfWindow, metricSeries, metricValue, rollupsAnswerQuery, sql, type Db, type Metric, type MetricSeriesQuery, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeSpans, summariseAll, summaryMismatches } from '../src/index.ts'

// Two filters, or a group and a filter of another dimension, among model, vendor and service
// (issue 45 §3: "tokens of gpt-4o in svc-2"): read from the rows of the traces' shapes (migration
// 2026-12-06T1620), the same figures as the summaries give, through writes and retention.

const ms = 1_000_000n
// Two hours before midnight and one after: retention takes whole days of the rows of the day.
const hour0 = Date.parse('2026-02-01T22:00:00Z')
const MODELS = ['gpt-4o', 'GPT-4o', 'claude-sonnet-4', 'llama-3-70b'] as const
const VENDORS: Record<string, string> = { 'gpt-4o': 'openai', 'GPT-4o': 'OpenAI', 'claude-sonnet-4': 'anthropic', 'llama-3-70b': 'aws.bedrock' }

/**
 * 90 traces over three hours: one to three spans each, of varied models (one in any case), vendors
 * and services; some with a dated response model, some without a cost, some failing; one in nine
 * rooted in Tracewell's own service (left out), one in eleven with a Tracewell span under an
 * application root (kept).
 */
function spansOf(projectId: string, i: number): SpanInsert[] {
  const start = BigInt(hour0 + i * 2 * 60_000) * ms
  const count = 1 + (i % 3)
  return Array.from({ length: count }, (_, k) => {
    const model = MODELS[(i + k) % MODELS.length] as string
    const root = k === 0
    const service = root ? (i % 9 === 0 ? 'tracewell' : `svc-${i % 4}`) : i % 11 === 0 ? 'tracewell' : `svc-${(i + k) % 4}`
    const duration = BigInt(50 + ((i * 37 + k * 11) % 700)) * ms
    return {
      projectId, traceId: `${i}`.padStart(32, '0'), spanId: `${k + 1}`.padStart(16, '0'), parentSpanId: root ? null : '1'.padStart(16, '0'),
      name: 'op', kind: 1, startTimeUnixNano: String(start), endTimeUnixNano: String(start + duration), durationNs: String(duration), traceState: null,
      statusCode: (i + k) % 7 === 0 ? 2 : 0, statusMessage: null, serviceName: service, serviceVersion: null, scopeName: null, scopeVersion: null,
      llmVendor: VENDORS[model] ?? null, llmModel: model, llmResponseModel: i % 5 === 0 ? `${model}-2024-08-06` : null, llmRequestType: 'chat',
      inputTokens: 10 + (i % 13), outputTokens: i % 4 === 0 ? null : 5 + k, totalTokens: null, totalCostUsd: i % 6 === 0 ? null : ((i + k) % 17) / 100,
      sessionId: `s-${i}`, userId: `u-${i % 5}`, resourceAttributes: {}, events: [], links: [], attributes: {},
    }
  })
}

const METRICS: Metric[] = ['traces', 'spans', 'cost', 'tokens', 'input_tokens', 'output_tokens', 'error_rate']
type Case = Pick<MetricSeriesQuery, 'filter' | 'groupBy'>
const CASES: Case[] = [
  { filter: { model: 'gpt-4o', service: 'svc-2' } },
  { filter: { model: 'GPT-4O', vendor: 'openai' } },
  { filter: { model: 'claude-sonnet-4-2024-08-06', service: 'svc-1' } },
  { filter: { model: 'llama-3-70b', vendor: 'AWS.Bedrock', service: 'svc-3' } },
  { filter: { service: 'tracewell', model: 'gpt-4o' } },
  { filter: { service: 'svc-1' }, groupBy: 'model' },
  { filter: { model: 'gpt-4o' }, groupBy: 'service' },
  { filter: { vendor: 'anthropic', service: 'svc-0' }, groupBy: 'vendor' },
]

/** A series by group: group → points. */
const byGroup = (series: Awaited<ReturnType<typeof metricSeries>>['series']) => Object.fromEntries(series.map((s) => [s.group ?? 'none', s.points.map((p) => p.value)]))

for (const engine of engines) {
  describe(`traces' shapes on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open())
      await sql`insert into teams (id, name) values ('t', 't')`.execute(db)
      await sql`insert into projects (id, team_id, name) values ('shapes', 't', 'shapes')`.execute(db)
      await storeSpans(db, Array.from({ length: 90 }, (_, i) => spansOf('shapes', i)).flat())
      await summariseAll(db)
    })
    after(() => drop())

    /** Each case's series from the rows (whole hours) and from the summaries (the same window but its last millisecond), compared. */
    const compare = async (from: number, to: number, granularitySeconds: number) => {
      for (const metric of METRICS) {
        for (const { filter, groupBy } of CASES) {
          const query = { projectId: 'shapes', metric, filter, groupBy, granularitySeconds }
          assert.ok(rollupsAnswerQuery(query), `${metric} of ${JSON.stringify(filter)} by ${groupBy}: not from the rollups`)
          const rolled = byGroup((await metricSeries(db, { ...query, from: new Date(from), to: new Date(to) })).series)
          const exact = byGroup((await metricSeries(db, { ...query, from: new Date(from), to: new Date(to - 1) })).series)
          const label = `${metric} of ${JSON.stringify(filter)} by ${groupBy ?? 'none'} every ${granularitySeconds} s`
          assert.deepEqual(Object.keys(rolled), Object.keys(exact), `${label}: groups`)
          for (const [group, points] of Object.entries(exact)) {
            points.forEach((value, i) => {
              const got = rolled[group]?.[i] ?? null
              assert.ok(value === null ? got === null : got !== null && Math.abs(got - value) < 1e-9, `${label}, ${group} at ${i}: ${got} ≠ ${value}`)
            })
          }
          if (groupBy === undefined) {
            const [whole, wholeExact] = [await metricValue(db, { ...query, from: new Date(from), to: new Date(to) }), await metricValue(db, { ...query, from: new Date(from), to: new Date(to - 1) })]
            assert.ok(wholeExact === null ? whole === null : whole !== null && Math.abs(whole - wholeExact) < 1e-9, `${label}, over the window: ${whole} ≠ ${wholeExact}`)
          }
        }
      }
    }

    it('answers two filters, or a group and another filter, from the shapes as the summaries do', async () => {
      assert.deepEqual(await summaryMismatches(db, 'shapes'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      await compare(hour0, hour0 + 3 * 3_600_000, 3600)
      await compare(hour0, hour0 + 3 * 3_600_000, 3 * 3600)
      // Percentiles stay with the summaries' exact figures; one filter, with the rows of its dimension.
      assert.equal(rollupsAnswerQuery({ metric: 'latency_p95', filter: { model: 'gpt-4o', service: 'svc-2' } }), false)
      assert.equal(rollupsAnswerQuery({ metric: 'users', filter: { model: 'gpt-4o', service: 'svc-2' } }), false)
      assert.equal(rollupsAnswerQuery({ metric: 'tokens', filter: { model: 'gpt-4o', user: 'u-1' } }), false)
    })

    it('reads the shape rows, which the check compares', async () => {
      const traces = () => metricValue(db, { projectId: 'shapes', metric: 'traces', filter: { model: 'gpt-4o', service: 'svc-2' }, from: new Date(hour0), to: new Date(hour0 + 3_600_000) })
      const before = await traces()
      const tamper = (change: number) => sql`
        update usage_rollups set traces = traces + ${change}
        where project_id = 'shapes' and dimension = 'shape' and hour = ${new Date(hour0)} and value = (
          select value from usage_rollups where project_id = 'shapes' and dimension = 'shape' and hour = ${new Date(hour0)}
            and value like '%"gpt-4o"%' and value like '%"svc-2"%' order by value limit 1)`.execute(db)
      await tamper(1)
      assert.equal(await traces(), (before ?? 0) + 1)
      assert.equal((await summaryMismatches(db, 'shapes')).rollups, 1)
      await tamper(-1)
      assert.deepEqual(await summaryMismatches(db, 'shapes'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
    })

    it('keeps the shape rows through a trace that changes shape and hour, and retention', async () => {
      // A late span of trace 31 (hour 1) with another model and service, starting in hour 0.
      const late = { ...spansOf('shapes', 31)[0]!, spanId: '9'.padStart(16, '0'), parentSpanId: '1'.padStart(16, '0'), llmModel: 'o3', llmVendor: 'openai', serviceName: 'svc-9',
        startTimeUnixNano: String(BigInt(hour0 + 50 * 60_000) * ms) }
      await storeSpans(db, [{ ...late, endTimeUnixNano: String(BigInt(late.startTimeUnixNano) + 10n * ms), durationNs: String(10n * ms) }])
      await summariseAll(db)
      assert.deepEqual(await summaryMismatches(db, 'shapes'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      await compare(hour0, hour0 + 3 * 3_600_000, 3600)
      const midnight = new Date(hour0 + 2 * 3_600_000)
      await sql`delete from spans where project_id = 'shapes' and start_time < ${midnight}`.execute(db)
      await deleteSummariesOfWindow(db, 'shapes', { from: null, to: midnight })
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from usage_rollups where project_id = 'shapes' and dimension = 'shape' and hour < ${midnight}`.execute(db)
      assert.deepEqual(rows, [{ n: 0 }])
      assert.equal((await summaryMismatches(db, 'shapes')).rollups, 0)
      await compare(midnight.getTime(), hour0 + 3 * 3_600_000, 3600)
    })
  })
}
