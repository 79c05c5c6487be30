import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { MAX_SERIES_GROUPS, METRIC_GROUPS, METRICS, metricSeries, metricValue, sql, type Db, type Metric, type MetricGroup, type SpanInsert, type TraceFilterParams } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { storeSpans, summariseAll, summaryMismatches } from '../src/index.ts'

// The metric engine (metric-series.repository.ts) against figures computed by hand from the traces below.

const ms = 1_000_000n
const hour0 = Date.parse('2026-01-01T00:00:00Z')
const at = (minutes: number): bigint => BigInt(hour0 + minutes * 60_000) * ms

interface SpanSpec {
  trace: string
  span: string
  parent?: string
  startMin: number
  durationMs: number
  error?: boolean
  model?: string
  vendor?: string
  cost?: number
  input?: number
  output?: number
  service?: string
  user?: string
  session?: string
  prompt?: [registry: string, version: number]
  tags?: string[]
}

function span(spec: SpanSpec): SpanInsert {
  const start = at(spec.startMin)
  const duration = BigInt(spec.durationMs) * ms
  return {
    projectId: 'metrics', traceId: spec.trace.padStart(32, '0'), spanId: spec.span.padStart(16, '0'), parentSpanId: spec.parent === undefined ? null : spec.parent.padStart(16, '0'),
    name: 'op', kind: 1, startTimeUnixNano: String(start), endTimeUnixNano: String(start + duration), durationNs: String(duration), traceState: null,
    statusCode: spec.error === true ? 2 : 0, statusMessage: null, serviceName: spec.service ?? 'api', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: spec.vendor ?? null, llmModel: spec.model ?? null, llmRequestType: spec.model === undefined ? null : 'chat',
    inputTokens: spec.input ?? null, outputTokens: spec.output ?? null, totalTokens: null, totalCostUsd: spec.cost ?? null,
    sessionId: spec.session ?? null, userId: spec.user ?? null, resourceAttributes: {}, events: [], links: [],
    attributes: {
      ...(spec.prompt === undefined ? {} : { 'langfuse.observation.prompt.name': { stringValue: spec.prompt[0] }, 'langfuse.observation.prompt.version': { intValue: String(spec.prompt[1]) } }),
      ...(spec.tags === undefined ? {} : { 'langfuse.trace.tags': { arrayValue: { values: spec.tags.map((tag) => ({ stringValue: tag })) } } }),
    },
  }
}

// In the first hour: a (100 ms, gpt-4o, $0.1, 10+5 tokens, u1, s1, prompt support:1, tag beta), b
// (300 ms over two spans, the child failed, claude, $0.2, 20+10, u2, s1, prompt support:2, tags
// beta and vip), c (200 ms, failed, no model, u1, s2, no prompt or tag), and one of Tracewell's own
// calls ($5, a prompt and a tag of its own) that every figure leaves out. In the second hour: e
// ($0.05, 200 ms, prompt support:2 named by its OpenInference-tagged span).
const SPANS: SpanSpec[] = [
  { trace: 'a', span: 'a1', startMin: 10, durationMs: 100, model: 'gpt-4o', vendor: 'openai', cost: 0.1, input: 10, output: 5, user: 'u1', session: 's1', prompt: ['support', 1], tags: ['beta'] },
  { trace: 'b', span: 'b1', startMin: 20, durationMs: 300, user: 'u2', session: 's1', tags: ['vip', 'beta'] },
  { trace: 'b', span: 'b2', parent: 'b1', startMin: 20, durationMs: 50, error: true, model: 'claude-3-5-sonnet', vendor: 'anthropic', cost: 0.2, input: 20, output: 10, user: 'u2', session: 's1', prompt: ['support', 2] },
  { trace: 'c', span: 'c1', startMin: 30, durationMs: 200, error: true, user: 'u1', session: 's2' },
  { trace: 'd', span: 'd1', startMin: 40, durationMs: 900, service: 'tracewell', model: 'gpt-4o', vendor: 'openai', cost: 5, input: 1000, output: 1000, prompt: ['judge', 1], tags: ['beta'] },
  { trace: 'e', span: 'e1', startMin: 90, durationMs: 200, model: 'gpt-4o', vendor: 'openai', cost: 0.05, input: 1, output: 1, user: 'u3', session: 's3', prompt: ['support', 2] },
]

/**
 * score_avg of 'quality' (or, of `judgments`, judge_failure_rate) as the summaries say, computed
 * here: each score (finished judgment) with its trace's summary (none without one), Tracewell's own
 * traces left out of the scores, by a group (each of a trace's models, vendors, services, prompts
 * and tags; none for a trace without one) or under a filter (`all`).
 */
async function scoreAverages(db: Db, groupBy: MetricGroup | undefined, filter: TraceFilterParams = {}, of: 'scores' | 'judgments' = 'scores'): Promise<Record<string, number>> {
  const summary = (alias: string) => sql`left join trace_summaries t on t.project_id = ${sql.ref(`${alias}.project_id`)} and t.trace_id = ${sql.ref(`${alias}.trace_id`)}`
  const { rows } = await sql<{ value: number; service_name: string | null; models: string[] | null; response_models: string[] | null; vendors: string[] | null; services: string[] | null; prompts: string[] | null; tags: string[] | null; user_id: string | null; session_id: string | null }>`
    select ${of === 'scores' ? sql`s.value` : sql`(s.status = 'failed')::int as value`}, t.service_name, t.models, t.response_models, t.vendors, t.services, t.prompts, t.tags, t.user_id, t.session_id
    from ${of === 'scores'
      ? sql`scores s ${summary('s')} where s.project_id = 'metrics' and s.name = 'quality' and s.value is not null`
      : sql`evaluation_jobs s ${summary('s')} where s.project_id = 'metrics' and s.status in ('completed', 'failed')`}`.execute(db)
  const sums = new Map<string, { sum: number; n: number }>()
  const lower = (values: string[] | null | undefined) => (values ?? []).map((v) => v.toLowerCase())
  for (const row of rows) {
    if (of === 'scores' && row.service_name === 'tracewell') continue
    if (filter.model !== undefined && ![...lower(row.models), ...lower(row.response_models)].includes(filter.model.toLowerCase())) continue
    if (filter.vendor !== undefined && !lower(row.vendors).includes(filter.vendor.toLowerCase())) continue
    if (filter.service !== undefined && !(row.services ?? []).includes(filter.service)) continue
    if (filter.user !== undefined && row.user_id !== filter.user) continue
    if (filter.session !== undefined && row.session_id !== filter.session) continue
    const each = (values: string[] | null) => ((values ?? []).length === 0 ? ['none'] : (values as string[]))
    const groups = groupBy === undefined ? ['all']
      : groupBy === 'user' ? [row.user_id ?? 'none'] : groupBy === 'session' ? [row.session_id ?? 'none']
      : each(row[({ model: 'models', vendor: 'vendors', service: 'services', prompt: 'prompts', tag: 'tags' } as const)[groupBy as 'model']])
    for (const group of groups) {
      const into = sums.get(group) ?? { sum: 0, n: 0 }
      into.sum += row.value
      into.n += 1
      sums.set(group, into)
    }
  }
  return Object.fromEntries([...sums].map(([group, { sum, n }]) => [group, sum / n]))
}

const firstHour = { from: new Date(hour0), to: new Date(hour0 + 3_600_000) }
const twoHours = { from: new Date(hour0), to: new Date(hour0 + 2 * 3_600_000) }
/** Percentiles from the rollups' histograms are within 9.1 % of the exact ones (metric-rollups.ts). */
const PERCENTILE_BOUND = 0.0906

for (const engine of engines) {
  describe(`metric engine on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open())
      await sql`insert into teams (id, name) values ('t', 't')`.execute(db)
      await sql`insert into projects (id, team_id, name) values ('metrics', 't', 'metrics')`.execute(db)
      await storeSpans(db, SPANS.map(span))
      await summariseAll(db)
    })
    after(() => drop())

    const value = (metric: Metric, extra: Partial<Parameters<typeof metricValue>[1]> = {}) =>
      metricValue(db, { projectId: 'metrics', metric, ...firstHour, ...extra })

    it('answers each metric of traces over a window, leaving Tracewell’s own calls out', async () => {
      // Minutes 5 to 55: not whole hours, read from the trace summaries.
      const window = { from: new Date(hour0 + 5 * 60_000), to: new Date(hour0 + 55 * 60_000) }
      const expected: Array<[Metric, number]> = [
        ['traces', 3], ['spans', 4], ['error_rate', 2 / 3], ['latency_p50', 200], ['latency_p95', 290], ['latency_p99', 298],
        ['cost', 0.3], ['tokens', 45], ['input_tokens', 30], ['output_tokens', 15], ['sessions', 2], ['users', 2],
      ]
      for (const [metric, figure] of expected) {
        const got = await value(metric, window)
        assert.ok(got !== null && Math.abs(got - figure) < 1e-9, `${metric}: ${got} ≠ ${figure}`)
      }
    })

    it('applies the trace list’s filters', async () => {
      assert.equal(await value('traces', { filter: { model: 'GPT-4o' } }), 1)
      assert.equal(await value('traces', { filter: { status: 'error' } }), 2)
      assert.equal(await value('traces', { filter: { user: 'u1', session: 's2' } }), 1)
      assert.equal(await value('error_rate', { filter: { session: 's1' } }), 0.5)
    })

    it('says no data for a rate over nothing, and 0 for a count', async () => {
      const empty = { from: new Date(hour0 - 3_600_000), to: new Date(hour0) }
      assert.equal(await value('error_rate', empty), null)
      assert.equal(await value('latency_p95', empty), null)
      assert.equal(await value('traces', empty), 0)
      assert.equal(await value('cost', empty), 0)
    })

    it('reads whole hours from the rollups, the same sums as the summaries', async () => {
      const { series } = await metricSeries(db, { projectId: 'metrics', metric: 'cost', from: new Date(hour0), to: new Date(hour0 + 2 * 3_600_000), granularitySeconds: 3600 })
      assert.equal(series.length, 1)
      assert.equal(series[0]?.group, null)
      assert.deepEqual(series[0]?.points.map((p) => p.t), ['2026-01-01T00:00:00.000Z', '2026-01-01T01:00:00.000Z'])
      const [first, second] = series[0]?.points.map((p) => p.value) ?? []
      assert.ok(Math.abs((first ?? 0) - 0.3) < 1e-9 && Math.abs((second ?? 0) - 0.05) < 1e-9, `${first}, ${second}`)
      assert.equal(await value('cost', { from: new Date(hour0 + 3_600_000), to: new Date(hour0 + 2 * 3_600_000) }), 0.05)
      assert.equal(await value('traces', { filter: { vendor: 'OpenAI' } }), 1)
    })

    it('groups a series, each group with every point', async () => {
      const { series } = await metricSeries(db, {
        projectId: 'metrics', metric: 'traces', groupBy: 'model', from: new Date(hour0), to: new Date(hour0 + 3_600_000), granularitySeconds: 1800,
      })
      const byGroup = Object.fromEntries(series.map((s) => [s.group ?? 'none', s.points.map((p) => p.value)]))
      assert.deepEqual(byGroup, { 'gpt-4o': [1, 0], 'claude-3-5-sonnet': [1, 0], none: [0, 1] })
      // Whole hours: from the rollups' histograms, within 9.1 % of percentile_cont's 150 and 300.
      const users = await metricSeries(db, { projectId: 'metrics', metric: 'latency_p50', groupBy: 'user', ...firstHour, granularitySeconds: 3600 })
      const p50 = Object.fromEntries(users.series.map((s) => [s.group, s.points[0]?.value as number]))
      assert.deepEqual(Object.keys(p50).sort(), ['u1', 'u2'])
      assert.ok(Math.abs((p50.u1 as number) / 150 - 1) <= PERCENTILE_BOUND && Math.abs((p50.u2 as number) / 300 - 1) <= PERCENTILE_BOUND, JSON.stringify(p50))
    })

    it('groups by prompt (registry:version) and by tag, Tracewell’s own traces left out', async () => {
      const of = async (groupBy: MetricGroup, metric: Metric, window = twoHours) =>
        Object.fromEntries((await metricSeries(db, { projectId: 'metrics', metric, groupBy, ...window, granularitySeconds: 3600 })).series.map((s) => [s.group ?? 'none', s.points.map((p) => p.value)]))
      // A trace counts under each prompt and tag its spans named, with all of its figures.
      assert.deepEqual(await of('prompt', 'traces'), { 'support:2': [1, 1], 'support:1': [1, 0], none: [1, 0] })
      assert.deepEqual(await of('tag', 'traces'), { beta: [2, 0], vip: [1, 0], none: [1, 1] })
      assert.deepEqual(await of('tag', 'error_rate'), { beta: [0.5, null], vip: [1, null], none: [1, 0] })
      const cost = await of('prompt', 'cost')
      assert.ok(Math.abs((cost['support:2']?.[0] as number) - 0.2) < 1e-9 && Math.abs((cost['support:2']?.[1] as number) - 0.05) < 1e-9, JSON.stringify(cost))
      // The same groups from the summaries, for a window the rollups cannot answer.
      assert.deepEqual(await of('tag', 'traces', { from: new Date(hour0), to: new Date(hour0 + 2 * 3_600_000 - 1) }), { beta: [2, 0], vip: [1, 0], none: [1, 1] })
    })

    it('answers from the rollups what a direct computation on the summaries answers, for every metric and grouping', async () => {
      // The same window but for its last millisecond (no trace starts in it), which the rollups
      // cannot answer: the summaries' exact figures.
      const direct = { from: new Date(hour0), to: new Date(hour0 + 2 * 3_600_000 - 1) }
      // A span's own tokens, cost and count go to its own model, vendor and service in the rollups, the
      // whole trace's to each of its in the summaries: compared where the two agree by definition.
      const spanFigures = new Set<Metric>(['spans', 'cost', 'tokens', 'input_tokens', 'output_tokens'])
      for (const metric of METRICS) {
        if (metric === 'score_avg' || metric === 'judge_failure_rate') continue
        for (const groupBy of [undefined, ...METRIC_GROUPS.filter((g) => g !== 'score_name')]) {
          if (spanFigures.has(metric) && (groupBy === 'model' || groupBy === 'vendor' || groupBy === 'service')) continue
          const series = async (window: { from: Date; to: Date }): Promise<Record<string, Array<number | null>>> =>
            Object.fromEntries((await metricSeries(db, { projectId: 'metrics', metric, groupBy, ...window, granularitySeconds: 3600 })).series.map((s) => [s.group ?? 'none', s.points.map((p) => p.value)]))
          const [rolled, exact] = [await series(twoHours), await series(direct)]
          assert.deepEqual(Object.keys(rolled).sort(), Object.keys(exact).sort(), `${metric} by ${groupBy}: groups`)
          for (const [group, values] of Object.entries(exact)) {
            values.forEach((value, i) => {
              const got = rolled[group]?.[i] ?? null
              const bound = metric.startsWith('latency_') ? PERCENTILE_BOUND * Math.abs(value ?? 0) : 1e-9
              assert.ok(value === null ? got === null : got !== null && Math.abs(got - value) <= bound, `${metric} by ${groupBy}, ${group} at ${i}: ${got} ≠ ${value}`)
            })
          }
        }
      }
    })

    it('averages scores and counts failed judgments', async () => {
      await sql`insert into scores (project_id, id, trace_id, name, data_type, value, source, created_at, updated_at) values
        ('metrics', 's-1', ${'a'.padStart(32, '0')}, 'quality', 'numeric', 0.5, 'api', ${new Date(hour0 + 60_000)}, now()),
        ('metrics', 's-2', ${'b'.padStart(32, '0')}, 'quality', 'numeric', 1, 'api', ${new Date(hour0 + 120_000)}, now()),
        ('metrics', 's-3', ${'d'.padStart(32, '0')}, 'quality', 'numeric', 0, 'eval', ${new Date(hour0 + 120_000)}, now()),
        ('metrics', 's-4', ${'b'.padStart(32, '0')}, 'helpful', 'numeric', 0, 'api', ${new Date(hour0 + 120_000)}, now())`.execute(db)
      assert.equal(await value('score_avg', { scoreName: 'quality' }), 0.75)
      assert.equal(await value('score_avg', { scoreName: 'quality', filter: { user: 'u2' } }), 1)
      const byName = await metricSeries(db, { projectId: 'metrics', metric: 'score_avg', groupBy: 'score_name', ...firstHour, granularitySeconds: 3600 })
      assert.deepEqual(Object.fromEntries(byName.series.map((s) => [s.group, s.points[0]?.value])), { quality: 0.75, helpful: 0 })
      // The score rollups follow every change of the scores: a value changed, a score deleted, one resent.
      const rolledUp = () => value('score_avg', { scoreName: 'quality' })
      const exact = () => value('score_avg', { scoreName: 'quality', from: new Date(hour0 + 1) })
      await sql`update scores set value = 0.25 where id = 's-2'`.execute(db)
      assert.deepEqual([await rolledUp(), await exact()], [0.375, 0.375])
      await sql`delete from scores where id = 's-1'`.execute(db)
      assert.deepEqual([await rolledUp(), await exact()], [0.25, 0.25])
      await sql`insert into scores (project_id, id, trace_id, name, data_type, value, source, created_at, updated_at) values
        ('metrics', 's-1', ${'a'.padStart(32, '0')}, 'quality', 'numeric', 0.5, 'api', ${new Date(hour0 + 60_000)}, now())`.execute(db)
      assert.deepEqual([await rolledUp(), await exact()], [0.375, 0.375])
      assert.equal((await sql<{ n: number }>`select count(*)::int as n from score_rollups where project_id = 'metrics'`.execute(db)).rows[0]?.n, 2)

      await sql`insert into llm_connections (id, project_id, name, provider, base_url, api_key_sealed, api_key_hint) values ('c', 'metrics', 'c', 'openai', 'http://x', 'x', 'x')`.execute(db)
      await sql`insert into evaluators (id, project_id, name, connection_id, model, prompt, score_name) values ('e', 'metrics', 'e', 'c', 'm', 'p', 'quality')`.execute(db)
      await sql`insert into evaluation_jobs (project_id, evaluator_id, trace_id, status, updated_at) values
        ('metrics', 'e', ${'a'.padStart(32, '0')}, 'completed', ${new Date(hour0 + 60_000)}),
        ('metrics', 'e', ${'b'.padStart(32, '0')}, 'failed', ${new Date(hour0 + 60_000)}),
        ('metrics', 'e', ${'c'.padStart(32, '0')}, 'failed', ${new Date(hour0 + 60_000)}),
        ('metrics', 'e', ${'e'.padStart(32, '0')}, 'pending', ${new Date(hour0 + 60_000)})`.execute(db)
      const rate = await value('judge_failure_rate')
      assert.ok(rate !== null && Math.abs(rate - 2 / 3) < 1e-9, String(rate))
    })

    it('averages scores by a group of their traces, or with a filter of those, as the summaries say, whatever came first', async () => {
      const quality = (id: string, trace: string | null, value: number, minute: number, session: string | null = null) =>
        sql`insert into scores (project_id, id, trace_id, session_id, name, data_type, value, source, created_at, updated_at) values
          ('metrics', ${id}, ${trace === null ? null : trace.padStart(32, '0')}, ${session}, 'quality', 'numeric', ${value}, 'api', ${new Date(hour0 + minute * 60_000)}, now())`.execute(db)
      await quality('g-1', 'c', 0.125, 31)
      await quality('g-2', 'e', 0.75, 91)
      await quality('g-3', null, 0.5, 5, 's1')
      // Before its trace: read through the summaries' join until the fold copies the trace's dimensions.
      await quality('g-4', 'f', 1, 50)
      // Of a trace that never comes: in group none, whether the fold still looks for its trace or no longer does.
      await quality('g-5', 'z', 0.25, 20)
      const window = { from: new Date(hour0), to: new Date(hour0 + 2 * 3_600_000) }
      const notHours = { from: new Date(hour0), to: new Date(hour0 + 2 * 3_600_000 - 1) }
      const filters: TraceFilterParams[] = [{ model: 'GPT-4o' }, { vendor: 'anthropic' }, { service: 'api' }, { user: 'u1' }, { session: 's1' }]
      const compare = async (when: string) => {
        for (const range of [window, notHours]) {
          for (const groupBy of METRIC_GROUPS.filter((g) => g !== 'score_name')) {
            const { series } = await metricSeries(db, { projectId: 'metrics', metric: 'score_avg', scoreName: 'quality', groupBy, ...range, granularitySeconds: 7200 })
            const got = Object.fromEntries(series.map((s) => [s.group ?? 'none', s.points[0]?.value]))
            assert.deepEqual(got, await scoreAverages(db, groupBy), `${when}: by ${groupBy}`)
          }
          for (const filter of filters) {
            const got = await metricValue(db, { projectId: 'metrics', metric: 'score_avg', scoreName: 'quality', filter, ...range })
            assert.equal(got, (await scoreAverages(db, undefined, filter)).all ?? null, `${when}: ${JSON.stringify(filter)}`)
          }
        }
      }
      await compare('scores written, not yet folded')
      await storeSpans(db, [span({ trace: 'f', span: 'f1', startMin: 45, durationMs: 100, model: 'gpt-4o-mini', vendor: 'openai', user: 'u4', session: 's4', tags: ['late'] })])
      await summariseAll(db)
      await compare('the score’s trace folded after it')
      // Trace a grows: another model, vendor, service, prompt and tag, which its scores' rows take up.
      await storeSpans(db, [span({ trace: 'a', span: 'a2', parent: 'a1', startMin: 11, durationMs: 10, model: 'llama-3', vendor: 'meta', service: 'rag', prompt: ['rag', 3], tags: ['grown'] })])
      await summariseAll(db)
      const unknown = async () => (await sql<{ n: number }>`select count(*)::int as n from score_dimensions where project_id = 'metrics' and not summarised`.execute(db)).rows[0]?.n
      assert.equal(await unknown(), 1)
      await compare('a scored trace grown')
      // A score moved to another trace, one deleted.
      await sql`update scores set trace_id = ${'b'.padStart(32, '0')} where id = 'g-1'`.execute(db)
      await sql`delete from scores where id = 'g-2'`.execute(db)
      await compare('scores moved and deleted')
      assert.deepEqual(await summaryMismatches(db, 'metrics'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      await sql`update score_dimensions set models = '{gpt-4o}' where score_id = 's-2'`.execute(db)
      assert.equal((await summaryMismatches(db, 'metrics')).rollups, 1)
      await sql`delete from score_dimensions where score_id = 's-2'`.execute(db)
      assert.equal((await summaryMismatches(db, 'metrics')).rollups, 1)
      // Written anew, unknown, by its score's next change.
      await sql`update scores set value = value where id = 's-2'`.execute(db)
      assert.equal((await summaryMismatches(db, 'metrics')).rollups, 0)
    })

    it('counts failed judgments by a group of their traces, or with a filter of those, as the summaries say, whatever came first', async () => {
      await sql`insert into evaluators (id, project_id, name, connection_id, model, prompt, score_name) values ('e2', 'metrics', 'e2', 'c', 'm', 'p', 'quality')`.execute(db)
      const judgment = (trace: string, status: string, minute: number) =>
        sql`insert into evaluation_jobs (project_id, evaluator_id, trace_id, status, updated_at) values
          ('metrics', 'e2', ${trace.padStart(32, '0')}, ${status}, ${new Date(hour0 + minute * 60_000)})`.execute(db)
      await judgment('c', 'completed', 32)
      await judgment('e', 'failed', 92)
      await judgment('d', 'completed', 41)
      // Before its trace, and of a trace that never comes.
      await judgment('h', 'failed', 52)
      await judgment('z', 'completed', 21)
      const window = { from: new Date(hour0), to: new Date(hour0 + 2 * 3_600_000) }
      const notHours = { from: new Date(hour0), to: new Date(hour0 + 2 * 3_600_000 - 1) }
      const filters: TraceFilterParams[] = [{ model: 'GPT-4o' }, { vendor: 'anthropic' }, { service: 'api' }, { user: 'u1' }, { session: 's1' }]
      const compare = async (when: string) => {
        for (const range of [window, notHours]) {
          for (const groupBy of [undefined, ...METRIC_GROUPS.filter((g) => g !== 'score_name')]) {
            const { series } = await metricSeries(db, { projectId: 'metrics', metric: 'judge_failure_rate', groupBy, ...range, granularitySeconds: 7200 })
            const got = Object.fromEntries(series.map((s) => [s.group ?? (groupBy === undefined ? 'all' : 'none'), s.points[0]?.value]))
            assert.deepEqual(got, await scoreAverages(db, groupBy, {}, 'judgments'), `${when}: by ${groupBy}`)
          }
          for (const filter of filters) {
            const got = await metricValue(db, { projectId: 'metrics', metric: 'judge_failure_rate', filter, ...range })
            assert.equal(got, (await scoreAverages(db, undefined, filter, 'judgments')).all ?? null, `${when}: ${JSON.stringify(filter)}`)
          }
        }
      }
      const unknown = async () => (await sql<{ n: number }>`select count(*)::int as n from judgment_dimensions where project_id = 'metrics' and not summarised`.execute(db)).rows[0]?.n
      await compare('judgments written, not yet folded')
      assert.equal(await unknown(), 5)
      await storeSpans(db, [span({ trace: 'h', span: 'h1', startMin: 46, durationMs: 100, model: 'gpt-4o', vendor: 'openai', user: 'u1', session: 's5' })])
      await summariseAll(db)
      // The fold copied every judgment's trace but z's (never stored).
      assert.equal(await unknown(), 1)
      await compare('the judgment’s trace folded after it')
      // Trace e grows: another model and vendor, which its judgments' rows take up.
      await storeSpans(db, [span({ trace: 'e', span: 'e2', parent: 'e1', startMin: 91, durationMs: 10, model: 'mistral-large', vendor: 'mistral' })])
      await summariseAll(db)
      await compare('a judged trace grown')
      // A pending judgment fails; a trace's judgments erased (as erasure deletes them).
      await sql`update evaluation_jobs set status = 'failed', updated_at = ${new Date(hour0 + 95 * 60_000)} where status = 'pending'`.execute(db)
      await sql`delete from evaluation_jobs where project_id = 'metrics' and trace_id = ${'c'.padStart(32, '0')}`.execute(db)
      await compare('a judgment failed, a trace’s judgments erased')
      assert.deepEqual(await summaryMismatches(db, 'metrics'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
      await sql`update judgment_dimensions set user_id = 'u9' where trace_id = ${'h'.padStart(32, '0')}`.execute(db)
      assert.equal((await summaryMismatches(db, 'metrics')).rollups, 1)
      await sql`delete from judgment_dimensions where trace_id = ${'h'.padStart(32, '0')}`.execute(db)
      assert.equal((await summaryMismatches(db, 'metrics')).rollups, 1)
      await sql`update evaluation_jobs set updated_at = updated_at where trace_id = ${'h'.padStart(32, '0')}`.execute(db)
      assert.equal((await summaryMismatches(db, 'metrics')).rollups, 0)
    })

    it('keeps the 50 groups of the highest average over the window, ties in code point order, each with its points', async () => {
      // 60 sessions of a trace each, scored twice (one score in each hour): averages 0 to 1 in sevenths, many tied.
      const sessions = Array.from({ length: 60 }, (_, i) => `k-${String(i).padStart(2, '0')}`)
      await storeSpans(db, sessions.map((session, i) => span({ trace: `k${i}`, span: `k${i}`, startMin: 5 + i, durationMs: 10, session })))
      await summariseAll(db)
      const first = (i: number) => (i * 5) % 7 / 7
      const second = (i: number) => (i * 3) % 7 / 7
      await sql`insert into scores (project_id, id, trace_id, name, data_type, value, source, created_at, updated_at)
        select 'metrics', 'k-' || i || '-' || h, lpad('k' || i, 32, '0'), 'rank', 'numeric', v, 'api', ${new Date(hour0)}::timestamptz + (h * 60 + 30) * interval '1 minute', now()
        from unnest(${sessions.map((_, i) => i)}::int[], ${sessions.map((_, i) => first(i))}::float8[], ${sessions.map((_, i) => second(i))}::float8[]) as k(i, a, b),
          lateral (values (0, a), (1, b)) as p(h, v)`.execute(db)
      const expected = Object.fromEntries(sessions
        .map((session, i) => ({ session, figure: (first(i) + second(i)) / 2, points: [first(i), second(i)] }))
        .sort((a, b) => b.figure - a.figure || (a.session < b.session ? -1 : 1))
        .slice(0, MAX_SERIES_GROUPS).map(({ session, points }) => [session, points]))
      for (const range of [twoHours, { from: new Date(hour0), to: new Date(hour0 + 2 * 3_600_000 - 1) }]) {
        const { series } = await metricSeries(db, { projectId: 'metrics', metric: 'score_avg', scoreName: 'rank', groupBy: 'session', ...range, granularitySeconds: 3600 })
        assert.deepEqual(Object.fromEntries(series.map((s) => [s.group, s.points.map((p) => p.value)])), expected)
      }
    })

    it('refuses what it cannot answer', async () => {
      await assert.rejects(value('score_avg'), /scoreName: score_avg needs the score/)
      await assert.rejects(
        metricSeries(db, { projectId: 'metrics', metric: 'traces', from: new Date(hour0), to: new Date(hour0 + 86_400_000), granularitySeconds: 60 }),
        /granularity: 1440 points/,
      )
    })
  })
}
