import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createProject, type SpanInsert } from '@tracewell/db'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { mintApiKey } from '../src/mint-api-key.ts'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// Dashboards (docs/api.md#dashboards): their CRUD, the default dashboard every project gets once,
// each chart's data from traces the writer stored and summarised, export and import.

const hourMs = 3_600_000
// Whole hours, so that the sums come from the rollups and the rates from the summaries; an hour
// past this one, so that the scores given now are in the window even if the hour turns meanwhile.
const thisHour = Math.floor(Date.now() / hourMs) * hourMs
const from = new Date(thisHour - 3 * hourMs)
const to = new Date(thisHour + 2 * hourMs)
const ns = (ms: number) => BigInt(ms) * 1_000_000n
const traceId = (n: number) => n.toString(16).padStart(32, '0')

function llmSpan(projectId: string, n: number, atMs: number, model: string, cost: number, error = false): SpanInsert {
  const start = ns(atMs)
  const end = start + ns(200 * n)
  return {
    projectId, traceId: traceId(n), spanId: traceId(n).slice(16), parentSpanId: null, name: 'chat', kind: 3,
    startTimeUnixNano: String(start), endTimeUnixNano: String(end), durationNs: String(end - start),
    traceState: null, statusCode: error ? 2 : 0, statusMessage: error ? 'boom' : null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: 'openai', llmModel: model, llmRequestType: 'chat', inputTokens: 100 * n, outputTokens: 10 * n, totalTokens: 110 * n,
    totalCostUsd: cost, costSource: 'price_table',
    attributes: {}, resourceAttributes: {}, events: [], links: [],
  }
}

const widget = (id: string, extra: Record<string, unknown>) => ({ id, title: id, ...extra })

describe('dashboards', () => {
  let cp: TestControlPlane
  let ws: Workspace
  const as = (key: string) => ({ 'x-api-key': key })
  const teamUrl = (path: string, query = '') => `${path}?project_id=${ws.projectId}${query}`

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db)
    const first = thisHour - 3 * hourMs + 10 * 60_000
    await storeSpans(cp.db, [
      llmSpan(ws.projectId, 1, first, 'gpt-4o', 0.5),
      llmSpan(ws.projectId, 2, first + 60_000, 'gpt-4o-mini', 0.25, true),
      llmSpan(ws.projectId, 3, first + hourMs, 'gpt-4o', 1),
    ])
    await summariseAll(cp.db)
    for (const [trace, value] of [[1, 0.5], [3, 1]] as const) {
      const scored = await cp.app.inject({ method: 'POST', url: '/api/scores', headers: as(ws.projectKey), payload: { traceId: traceId(trace), name: 'quality', value } })
      assert.equal(scored.statusCode, 201, scored.body)
    }
  })
  after(() => cp.close())

  it('creates, lists, reads, replaces and deletes a dashboard', async () => {
    const body = {
      name: 'Costs',
      widgets: [
        { title: 'Cost by model', metric: 'cost', groupBy: 'model', chart: 'bar', granularity: 3600, layout: { x: 0, y: 0, w: 6, h: 4 } },
        widget('p95', { metric: 'latency_p95', chart: 'number', filter: { model: 'gpt-4o' } }),
      ],
    }
    const created = await cp.app.inject({ method: 'POST', url: teamUrl('/api/dashboards'), headers: as(ws.teamKey), payload: body })
    assert.equal(created.statusCode, 201, created.body)
    const dashboard = created.json()
    assert.match(dashboard.widgets[0].id, /^[0-9a-f-]{36}$/)
    assert.deepEqual(dashboard, {
      id: dashboard.id,
      projectId: ws.projectId,
      name: 'Costs',
      isDefault: false,
      widgets: [{ id: dashboard.widgets[0].id, ...body.widgets[0] }, body.widgets[1]],
      createdAt: dashboard.createdAt,
      updatedAt: dashboard.createdAt,
    })

    const read = await cp.app.inject({ url: `/api/dashboards/${dashboard.id}`, headers: as(ws.projectKey) })
    assert.deepEqual([read.statusCode, read.json()], [200, dashboard])

    const list = await cp.app.inject({ url: '/api/dashboards', headers: as(ws.projectKey) })
    assert.equal(list.statusCode, 200)
    assert.deepEqual(
      list.json().dashboards.map((d: { name: string; isDefault: boolean }) => [d.name, d.isDefault]),
      [['Usage', true], ['Costs', false]],
    )

    const replaced = await cp.app.inject({
      method: 'PUT', url: teamUrl(`/api/dashboards/${dashboard.id}`), headers: as(ws.teamKey),
      payload: { name: 'Spend', widgets: [body.widgets[1]] },
    })
    assert.equal(replaced.statusCode, 200, replaced.body)
    assert.deepEqual({ ...replaced.json<object>(), updatedAt: null }, { ...dashboard, name: 'Spend', widgets: [body.widgets[1]], updatedAt: null })
    assert.ok(replaced.json().updatedAt > dashboard.updatedAt)

    const deleted = await cp.app.inject({ method: 'DELETE', url: teamUrl(`/api/dashboards/${dashboard.id}`), headers: as(ws.teamKey) })
    assert.deepEqual([deleted.statusCode, deleted.body], [204, ''])
    const gone = await cp.app.inject({ url: `/api/dashboards/${dashboard.id}`, headers: as(ws.projectKey) })
    assert.deepEqual([gone.statusCode, gone.json()], [404, { message: 'Dashboard not found' }])
    const again = await cp.app.inject({ method: 'DELETE', url: teamUrl(`/api/dashboards/${dashboard.id}`), headers: as(ws.teamKey) })
    assert.deepEqual([again.statusCode, again.json()], [404, { message: 'Dashboard not found' }])
  })

  it('keeps project keys without the write scope to reading', async () => {
    const { secret: readKey } = await mintApiKey(cp.db, 'project', { teamId: ws.teamId, projectId: ws.projectId }, undefined, { scopes: ['ingest', 'read'] })
    const refused = await cp.app.inject({ method: 'POST', url: '/api/dashboards', headers: as(readKey), payload: { name: 'x', widgets: [] } })
    assert.deepEqual([refused.statusCode, refused.json()], [403, { message: 'Not allowed: this needs the permission dashboards:write (docs/permissions.md)' }])
    const anonymous = await cp.app.inject({ url: teamUrl('/api/dashboards') })
    assert.equal(anonymous.statusCode, 401)
    const other = await seedWorkspace(cp.db, 'Other')
    const foreign = await cp.app.inject({ url: `/api/dashboards?project_id=${ws.projectId}`, headers: as(other.teamKey) })
    assert.deepEqual([foreign.statusCode, foreign.json()], [404, { message: 'Project not found' }])
  })

  it('gives a project its default dashboard once, however many first lists race', async () => {
    const project = await createProject(cp.db, { teamId: ws.teamId, name: 'Fresh' })
    const { secret } = await mintApiKey(cp.db, 'project', { teamId: ws.teamId, projectId: project.id })
    const lists = await Promise.all(Array.from({ length: 8 }, () => cp.app.inject({ url: '/api/dashboards', headers: as(secret) })))
    const ids = new Set(lists.map((list) => {
      assert.equal(list.statusCode, 200, list.body)
      const { dashboards } = list.json()
      assert.equal(dashboards.length, 1)
      return dashboards[0].id
    }))
    assert.equal(ids.size, 1)
    const rows = await cp.db.selectFrom('dashboards').select(['name', 'is_default']).where('project_id', '=', project.id).execute()
    assert.deepEqual(rows, [{ name: 'Usage', is_default: true }])
    const [dashboard] = lists[0]?.json().dashboards ?? []
    assert.deepEqual(dashboard.widgets.map((w: { metric: string; chart: string }) => `${w.metric}/${w.chart}`), [
      'cost/number', 'input_tokens/number', 'output_tokens/number', 'traces/number', 'error_rate/number', 'latency_p50/number', 'latency_p95/number',
      'cost/bar', 'input_tokens/bar', 'output_tokens/bar', 'traces/bar', 'error_rate/line', 'score_avg/line',
    ])
    const kept = await cp.app.inject({ method: 'DELETE', url: `/api/dashboards/${dashboard.id}?project_id=${project.id}`, headers: as(ws.teamKey) })
    assert.deepEqual([kept.statusCode, kept.json()], [409, { message: 'The default dashboard cannot be deleted; change its widgets instead' }])
  })

  it('answers each chart’s series from the stored traces', async () => {
    const created = await cp.app.inject({
      method: 'POST', url: teamUrl('/api/dashboards'), headers: as(ws.teamKey),
      payload: {
        name: 'Data',
        widgets: [
          widget('cost', { metric: 'cost', groupBy: 'model', chart: 'bar', granularity: 3600 }),
          widget('errors', { metric: 'error_rate', chart: 'line', granularity: 3600 }),
          widget('traces', { metric: 'traces', chart: 'table', granularity: 7200 }),
          widget('tokens', { metric: 'input_tokens', chart: 'number', filter: { model: 'gpt-4o' } }),
          widget('quality', { metric: 'score_avg', scoreName: 'quality', chart: 'number' }),
        ],
      },
    })
    assert.equal(created.statusCode, 201, created.body)
    const window = `&from=${from.toISOString()}&to=${to.toISOString()}`
    const data = await cp.app.inject({ url: teamUrl(`/api/dashboards/${created.json().id}/data`, window), headers: as(ws.teamKey) })
    assert.equal(data.statusCode, 200, data.body)
    const hours = [0, 1, 2, 3, 4].map((h) => new Date(from.getTime() + h * hourMs).toISOString())
    const points = (values: Array<number | null>, times = hours) => values.map((value, i) => ({ t: times[i], value }))
    assert.deepEqual(data.json(), {
      from: from.toISOString(),
      to: to.toISOString(),
      widgets: [
        {
          id: 'cost',
          granularity: 3600,
          series: [
            { group: 'gpt-4o', points: points([0.5, 1, 0, 0, 0]) },
            { group: 'gpt-4o-mini', points: points([0.25, 0, 0, 0, 0]) },
          ],
        },
        { id: 'errors', granularity: 3600, series: [{ group: null, points: points([0.5, 0, null, null, null]) }] },
        // Two-hour points start on a multiple of two hours: `from` is taken back to its point. Traces 1
        // and 2 start in from's hour, trace 3 an hour later.
        { id: 'traces', granularity: 7200, series: [{ group: null, points: twoHourPoints(from, to, [0, 0, 1]) }] },
        { id: 'tokens', granularity: 5 * 3600, series: [{ group: null, points: [{ t: from.toISOString(), value: 400 }] }] },
        { id: 'quality', granularity: 5 * 3600, series: [{ group: null, points: [{ t: from.toISOString(), value: 0.75 }] }] },
      ],
    })

    // A number's window is taken back to a whole hour, which the hourly rollups answer.
    const halfPast = new Date(from.getTime() + 30 * 60_000).toISOString()
    const numbers = await cp.app.inject({ url: teamUrl(`/api/dashboards/${created.json().id}/data`, `&from=${halfPast}&to=${to.toISOString()}`), headers: as(ws.teamKey) })
    assert.deepEqual(numbers.json().widgets.slice(3), [
      { id: 'tokens', granularity: 5 * 3600, series: [{ group: null, points: [{ t: from.toISOString(), value: 400 }] }] },
      { id: 'quality', granularity: 5 * 3600, series: [{ group: null, points: [{ t: from.toISOString(), value: 0.75 }] }] },
    ])

    const one = await cp.app.inject({ url: teamUrl(`/api/dashboards/${created.json().id}/data`, `${window}&widget_id=errors`), headers: as(ws.projectKey) })
    assert.deepEqual(one.json().widgets.map((w: { id: string }) => w.id), ['errors'])
    const none = await cp.app.inject({ url: `/api/dashboards/${created.json().id}/data?widget_id=nope`, headers: as(ws.projectKey) })
    assert.deepEqual([none.statusCode, none.json()], [404, { message: 'The dashboard has no widget "nope"' }])
  })

  it('refuses a window that gives a widget more than 1,000 points, naming it', async () => {
    const created = await cp.app.inject({
      method: 'POST', url: teamUrl('/api/dashboards'), headers: as(ws.teamKey),
      payload: { name: 'Fine', widgets: [widget('minutely', { metric: 'traces', chart: 'line', granularity: 60 })] },
    })
    const long = await cp.app.inject({
      url: `/api/dashboards/${created.json().id}/data?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z`, headers: as(ws.projectKey),
    })
    assert.deepEqual([long.statusCode, long.json()], [
      400,
      { message: 'querystring/from: the widget "minutely" would have 1440 points of 60 s; at most 1000: narrow the window or widen its granularity' },
    ])
    const backwards = await cp.app.inject({ url: `/api/dashboards/${created.json().id}/data?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`, headers: as(ws.projectKey) })
    assert.deepEqual([backwards.statusCode, backwards.json()], [400, { message: 'querystring/from: must be before to' }])
  })

  it('exports a dashboard and imports it back, into another project too', async () => {
    const widgets = [
      widget('a', { metric: 'score_avg', groupBy: 'score_name', chart: 'line', layout: { x: 0, y: 0, w: 12, h: 5 } }),
      widget('b', { metric: 'sessions', chart: 'table', filter: { service: 'svc', attr: ['env=prod'] }, granularity: 86_400 }),
    ]
    const created = await cp.app.inject({ method: 'POST', url: teamUrl('/api/dashboards'), headers: as(ws.teamKey), payload: { name: 'Quality', widgets } })
    const exported = await cp.app.inject({ url: `/api/dashboards/${created.json().id}/export`, headers: as(ws.projectKey) })
    assert.equal(exported.statusCode, 200)
    assert.equal(exported.headers['content-disposition'], `attachment; filename="dashboard-${created.json().id}.json"`)
    const document = exported.json()
    assert.deepEqual(document, { format: 'tracewell-dashboard', version: 1, exportedAt: document.exportedAt, name: 'Quality', widgets })

    const other = await createProject(cp.db, { teamId: ws.teamId, name: 'Elsewhere' })
    const imported = await cp.app.inject({ method: 'POST', url: `/api/dashboards/import?project_id=${other.id}`, headers: as(ws.teamKey), payload: document })
    assert.equal(imported.statusCode, 201, imported.body)
    assert.deepEqual({ ...imported.json<object>(), id: null, createdAt: null, updatedAt: null }, {
      id: null, projectId: other.id, name: 'Quality', isDefault: false, widgets, createdAt: null, updatedAt: null,
    })
    const again = await cp.app.inject({ url: `/api/dashboards/${imported.json().id}/export?project_id=${other.id}`, headers: as(ws.teamKey) })
    assert.deepEqual({ ...again.json<object>(), exportedAt: null }, { ...document, exportedAt: null })
  })

  it('refuses bad dashboards and documents with a 400 naming the field', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['/api/dashboards', { widgets: [] }, "body: must have required property 'name'"],
      ['/api/dashboards', { name: 'x', widgets: [widget('a', { metric: 'costs', chart: 'bar' })] }, 'body/widgets/0/metric: must be equal to one of the allowed values'],
      ['/api/dashboards', { name: 'x', widgets: [widget('a', { metric: 'cost', chart: 'pie' })] }, 'body/widgets/0/chart: must be equal to one of the allowed values'],
      ['/api/dashboards', { name: 'x', widgets: [widget('a', { metric: 'cost', chart: 'bar', groupBy: 'colour' })] }, 'body/widgets/0/groupBy: must be equal to one of the allowed values'],
      ['/api/dashboards', { name: 'x', widgets: [widget('a', { metric: 'score_avg', chart: 'line' })] }, 'body/widgets/0/scoreName: score_avg needs the score to average'],
      ['/api/dashboards', { name: 'x', widgets: [widget('a', { metric: 'cost', chart: 'line', granularity: 10 })] }, 'body/widgets/0/granularity: must be >= 60'],
      ['/api/dashboards', { name: 'x', widgets: [widget('a', { metric: 'cost', chart: 'number', groupBy: 'model' })] }, 'body/widgets/0/groupBy: a number shows one figure; group a table or a chart instead'],
      ['/api/dashboards', { name: 'x', widgets: [widget('a', { metric: 'cost', chart: 'bar' }), widget('a', { metric: 'traces', chart: 'bar' })] }, 'body/widgets/1/id: "a" appears twice'],
      ['/api/dashboards', { name: 'x', widgets: [widget('a', { metric: 'cost', chart: 'bar', filter: { attr: ['env'] } })] }, 'body/widgets/0/filter/attr/0: expected key=value, got "env"'],
      ['/api/dashboards', { name: 'x', widgets: [widget('a', { metric: 'cost', chart: 'bar', filter: { colour: 'red' } })] }, 'body/widgets/0/filter: must NOT have additional properties'],
      ['/api/dashboards/import', { name: 'x', widgets: [] }, "body: must have required property 'format'"],
      ['/api/dashboards/import', { format: 'tracewell-dashboard', version: 2, name: 'x', widgets: [] }, 'body/version: must be equal to constant'],
      ['/api/dashboards/import', { format: 'tracewell-dashboard', version: 1, name: 'x', widgets: [widget('a', { metric: 'cost' })] }, "body/widgets/0: must have required property 'chart'"],
    ]
    for (const [path, payload, message] of cases) {
      const answer = await cp.app.inject({ method: 'POST', url: teamUrl(path), headers: as(ws.teamKey), payload: payload as object })
      assert.deepEqual([answer.statusCode, answer.json()], [400, { message }], JSON.stringify(payload))
    }
  })
})

/** Traces per two-hour point, the points starting from `from` taken back to an even hour, up to `to`. */
function twoHourPoints(from: Date, to: Date, traceHours: number[]): Array<{ t: string; value: number }> {
  const step = 2 * hourMs
  const start = Math.floor(from.getTime() / step) * step
  const points = []
  for (let t = start; t < to.getTime(); t += step) {
    const value = traceHours.filter((hour) => Math.floor((from.getTime() + hour * hourMs - start) / step) === points.length).length
    points.push({ t: new Date(t).toISOString(), value })
  }
  return points
}
