import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { sql, type SpanInsert } from '@tracewell/db'
import { storeSpans } from '@tracewell/write-path'
import { parquetMetadata, parquetReadObjects } from 'hyparquet'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

const second = 1_000_000_000n
const t0 = 1_767_225_600n * second // 2026-01-01T00:00:00Z

function span(projectId: string, t: number, s: number, startNs: bigint): SpanInsert {
  return {
    projectId, traceId: t.toString(16).padStart(32, '0'), spanId: s.toString(16).padStart(16, '0'), parentSpanId: null, name: `op ${t}.${s}`, kind: 2,
    startTimeUnixNano: String(startNs), endTimeUnixNano: String(startNs + 5_000_000n), durationNs: '5000000', traceState: null, statusCode: 0, statusMessage: null,
    serviceName: 'api', serviceVersion: null, scopeName: 'scope', scopeVersion: null, llmVendor: 'openai', llmModel: 'gpt-4o', llmRequestType: 'chat',
    inputTokens: 10 * t, outputTokens: s, totalTokens: null, totalCostUsd: 0.1, sessionId: null, userId: `u${t}`,
    attributes: { 'gen_ai.prompt': { stringValue: `question ${t}.${s}` } }, resourceAttributes: { 'service.name': { stringValue: 'api' } }, events: [], links: [],
  }
}

describe('span export', () => {
  let cp: TestControlPlane
  let ws: Workspace
  // Five spans over two days, two of them at the same instant (ordered by trace, then span id).
  let spans: SpanInsert[]

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    spans = [
      span(ws.projectId, 2, 1, t0 + 10n * second),
      span(ws.projectId, 1, 1, t0 + 10n * second),
      span(ws.projectId, 1, 2, t0 + 20n * second),
      span(ws.projectId, 3, 1, t0 + 86_400n * second),
      span(ws.projectId, 3, 2, t0 + 86_500n * second),
    ]
    await storeSpans(cp.db, [...spans, span('other-project', 9, 9, t0)])
  })
  after(() => cp.close())

  const exportOf = (query: string, key = ws.teamKey) => cp.app.inject({ method: 'GET', url: `/api/projects/${ws.projectId}/export${query}`, headers: { 'x-api-key': key } })
  const linesOf = (body: string) => body.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line))
  const idOf = (line: { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ traceId: string; spanId: string }> }> }> }) => {
    const only = line.resourceSpans[0]!.scopeSpans[0]!.spans[0]!
    return `${only.traceId.slice(-1)}.${only.spanId.slice(-1)}`
  }

  it('streams OTLP/JSON lines, oldest first, one span a line, only the project’s', async () => {
    const response = await exportOf('')
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['content-type'], 'application/x-ndjson')
    assert.equal(response.headers['content-disposition'], `attachment; filename="${ws.projectId}-spans.jsonl"`)
    const lines = linesOf(response.body)
    assert.deepEqual(lines.map(idOf), ['1.1', '2.1', '1.2', '3.1', '3.2'])
    assert.deepEqual(lines[0], {
      resourceSpans: [{
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'api' } }] },
        scopeSpans: [{
          scope: { name: 'scope' },
          spans: [{
            traceId: '00000000000000000000000000000001', spanId: '0000000000000001', name: 'op 1.1', kind: 2,
            startTimeUnixNano: String(t0 + 10n * second), endTimeUnixNano: String(t0 + 10n * second + 5_000_000n),
            attributes: [{ key: 'gen_ai.prompt', value: { stringValue: 'question 1.1' } }], events: [], links: [], status: { code: 0 },
          }],
        }],
      }],
    })
  })

  it('takes a window, a limit, and resumes after a cursor made of the last line', async () => {
    const day2 = await exportOf('?from=2026-01-02T00:00:00Z&to=2026-01-03T00:00:00Z')
    assert.deepEqual(linesOf(day2.body).map(idOf), ['3.1', '3.2'])
    const firstTwo = linesOf((await exportOf('?limit=2')).body)
    assert.deepEqual(firstTwo.map(idOf), ['1.1', '2.1'])
    const last = firstTwo[1].resourceSpans[0].scopeSpans[0].spans[0]
    const rest = await exportOf(`?cursor=${last.startTimeUnixNano}_${last.traceId}_${last.spanId}`)
    assert.deepEqual(linesOf(rest.body).map(idOf), ['1.2', '3.1', '3.2'])
  })

  it('writes Parquet that reads back, with the cursor to go on from when the limit cut it', async () => {
    const response = await exportOf('?format=parquet&limit=3')
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['content-type'], 'application/vnd.apache.parquet')
    const file = response.rawPayload.buffer.slice(response.rawPayload.byteOffset, response.rawPayload.byteOffset + response.rawPayload.byteLength) as ArrayBuffer
    const rows = await parquetReadObjects({ file })
    assert.deepEqual(rows.map((row) => [row.trace_id, row.span_id, row.start_time_unix_nano, row.input_tokens, row.total_cost_usd, row.user_id]), [
      ['00000000000000000000000000000001', '0000000000000001', t0 + 10n * second, 10n, '0.1', 'u1'],
      ['00000000000000000000000000000002', '0000000000000001', t0 + 10n * second, 20n, '0.1', 'u2'],
      ['00000000000000000000000000000001', '0000000000000002', t0 + 20n * second, 10n, '0.1', 'u1'],
    ])
    assert.deepEqual(rows[0]!.attributes, { 'gen_ai.prompt': { stringValue: 'question 1.1' } })
    const cursor = parquetMetadata(file).key_value_metadata?.find((entry) => entry.key === 'tracewell.next_cursor')?.value
    assert.equal(cursor, `${t0 + 20n * second}_00000000000000000000000000000001_0000000000000002`)
    const rest = await exportOf(`?format=parquet&cursor=${cursor}`)
    const restFile = rest.rawPayload.buffer.slice(rest.rawPayload.byteOffset, rest.rawPayload.byteOffset + rest.rawPayload.byteLength) as ArrayBuffer
    assert.deepEqual((await parquetReadObjects({ file: restFile })).map((row) => row.name), ['op 3.1', 'op 3.2'])
    assert.equal(parquetMetadata(restFile).key_value_metadata, undefined)
  })

  it('refuses a bad cursor, format or window by name; 404 for another team', async () => {
    const cases: [string, number, string][] = [
      ['?cursor=abc', 400, 'querystring/cursor: expected <startTimeUnixNano>_<32 hex trace id>_<16 hex span id>'],
      ['?format=csv', 400, 'querystring/format: must be equal to constant'],
      ['?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 400, 'querystring/from: must be before to (from is inclusive, to exclusive)'],
      ['?from=yesterday', 400, 'querystring/from: expected an ISO 8601 date-time such as 2025-01-31T00:00:00Z, got "yesterday"'],
    ]
    for (const [query, status, message] of cases) {
      const response = await exportOf(query)
      assert.deepEqual([response.statusCode, response.json().message], [status, message], query)
    }
    const other = await seedWorkspace(cp.db, 'Other')
    assert.equal((await exportOf('', other.teamKey)).statusCode, 404)
  })

  // Its own bound: a million spans streamed twice take about a minute alone, more beside other suites.
  it('streams a million spans with flat memory, as JSON lines and as Parquet', { timeout: 360_000 }, async () => {
    const projectId = 'million'
    // A million spans written by the database itself, in an hour of one day: seconds, not minutes.
    await sql`
      insert into spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time, duration_ns, status_code, service_name,
        llm_model, input_tokens, output_tokens, attributes, resource_attributes, events, links)
      select ${projectId}, lpad(to_hex(i / 4), 32, '0'), lpad(to_hex(i), 16, '0'), null, 'llm call', 1,
        timestamptz '2026-01-01 00:00:00+00' + i * interval '3 milliseconds', timestamptz '2026-01-01 00:00:00+00' + i * interval '3 milliseconds' + interval '1 second',
        1000000000, 0, 'api', 'gpt-4o', i % 1000, 7,
        jsonb_build_object('gen_ai.prompt', jsonb_build_object('stringValue', 'a question of some length, number ' || i)), '{}', '[]', '[]'
      from generate_series(1, 1000000) as i`.execute(cp.db)
    await sql`insert into projects (id, team_id, name) values (${projectId}, ${ws.teamId}, 'million')`.execute(cp.db)
    const address = await cp.app.listen({ port: 0, host: '127.0.0.1' })

    // What the export keeps alive, measured after a full collection: RSS alone also moves with when
    // V8 chooses to collect and how far it grows its heap, which a busy machine shifts by tens of MB.
    setFlagsFromString('--expose-gc')
    const collectGarbage = runInNewContext('gc') as () => void

    /** Reads the whole export as a client would, sampling the process's RSS and its live memory; its byte count and last 8 MB. */
    async function exported(format: string, keepTail: boolean): Promise<{ bytes: number; lines: number; tail: Uint8Array; rss: number[]; live: number[] }> {
      const rss: number[] = []
      const live: number[] = []
      const sampler = setInterval(() => {
        rss.push(process.memoryUsage().rss)
        collectGarbage()
        const { heapUsed, arrayBuffers } = process.memoryUsage()
        live.push(heapUsed + arrayBuffers)
      }, 250)
      try {
        const response = await fetch(`${address}/api/projects/${projectId}/export?format=${format}`, { headers: { 'x-api-key': ws.teamKey } })
        assert.equal(response.status, 200)
        let bytes = 0
        let lines = 0
        const tail: Uint8Array[] = []
        let tailBytes = 0
        for await (const chunk of response.body!) {
          bytes += chunk.byteLength
          for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++
          if (!keepTail) continue
          tail.push(chunk)
          tailBytes += chunk.byteLength
          while (tailBytes - tail[0]!.byteLength > 8e6) tailBytes -= tail.shift()!.byteLength
        }
        return { bytes, lines, tail: Buffer.concat(tail), rss, live }
      } finally {
        clearInterval(sampler)
      }
    }
    /**
     * Flat: after the first tenth (pools and JIT warmed), what the export keeps alive in its second
     * half, measured after a full collection, is no more than in its first: a leak of anything per
     * span or page would climb with every page.
     */
    const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!
    const quartilesOf = (samples: number[]) => [0.1, 0.25, 0.5, 0.75, 1].map((share) => samples[Math.min(samples.length - 1, Math.floor(share * samples.length))]!)
    const climbOf = (samples: number[]) => {
      const warm = samples.slice(Math.floor(samples.length / 10))
      const half = Math.floor(warm.length / 2)
      return median(warm.slice(half)) - median(warm.slice(0, half))
    }

    const jsonl = await exported('jsonl', false)
    assert.equal(jsonl.lines, 1_000_000)
    const parquet = await exported('parquet', true)
    const tail = parquet.tail.buffer.slice(parquet.tail.byteOffset, parquet.tail.byteOffset + parquet.tail.byteLength) as ArrayBuffer
    assert.equal(parquetMetadata(tail).num_rows, 1_000_000n)
    for (const [name, run] of [['jsonl', jsonl], ['parquet', parquet]] as const) {
      const mb = (bytes: number) => (bytes / 1e6).toFixed(0)
      console.log(`${name}: 1,000,000 spans, ${mb(run.bytes)} MB; at 10/25/50/75/100 % of the export: RSS ${quartilesOf(run.rss).map(mb).join(' / ')} MB, live ${quartilesOf(run.live).map(mb).join(' / ')} MB, ${run.live.length} samples`)
      const climb = climbOf(run.live)
      assert.ok(climb < 32e6, `${name}: live memory (median, after a full collection) climbed by ${mb(climb)} MB in the second half of the export`)
    }
  })
})
