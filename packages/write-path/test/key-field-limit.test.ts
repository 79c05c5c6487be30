import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql, type Db, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { MAX_KEY_FIELD_LENGTH } from '@tracewell/otlp'
import { storeSpans, summariseAll, summaryMismatches } from '../src/index.ts'

// A derived field that is an index key is cut at decode to MAX_KEY_FIELD_LENGTH (@tracewell/otlp):
// the longest it can then be in bytes (three a UTF-16 code unit) must fold, in every field at
// once, since a fold that fails is claimed again by every later fold, for every project.

// Three bytes each and no repeat, so that Postgres cannot compress the index entries.
const longest = Array.from({ length: MAX_KEY_FIELD_LENGTH }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20_000))).join('')

const spanOf = (projectId: string, traceId: string, n: number, start: bigint): SpanInsert => ({
  projectId, traceId, spanId: String(n).padStart(16, '0'), parentSpanId: n === 1 ? null : '1'.padStart(16, '0'),
  name: 'op', kind: 1, startTimeUnixNano: String(start), endTimeUnixNano: String(start + 1_000_000n), durationNs: '1000000', traceState: null,
  statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
  llmVendor: 'openai', llmModel: null, llmResponseModel: null, llmRequestType: null,
  inputTokens: 1, outputTokens: 1, totalTokens: 2, totalCostUsd: null,
  sessionId: null, userId: null, resourceAttributes: {}, events: [], links: [], attributes: {},
})

for (const engine of engines) {
  describe(`the longest key fields on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open())
      await sql`insert into teams (id, name) values ('t', 't')`.execute(db)
      await sql`insert into projects (id, team_id, name) values ('keys', 't', 'keys'), ('shapes', 't', 'shapes')`.execute(db)
    })
    after(() => drop())

    it('folds a trace whose models are too many and too long for a shape row, leaving only its shape out', async () => {
      const start = BigInt(Date.now()) * 1_000_000n
      const traceId = '2'.padStart(32, '0')
      // Five distinct models of 600 bytes: each fits its model row, the five together no shape row.
      const spans: SpanInsert[] = Array.from({ length: 5 }, (_, i) => ({
        ...spanOf('shapes', traceId, i + 1, start),
        llmModel: `${i}${longest}`.slice(0, -1),
      }))
      await storeSpans(db, spans)
      await summariseAll(db)
      const { rows } = await sql<{ dimension: string; traces: number }>`
        select dimension, sum(traces)::int as traces from usage_rollups where project_id = 'shapes'
        group by dimension order by dimension`.execute(db)
      const byDimension = Object.fromEntries(rows.map((row) => [row.dimension, row.traces]))
      assert.equal(byDimension.model, 5)
      assert.equal(byDimension.all, 1)
      assert.equal(byDimension.shape, undefined)
      assert.deepEqual(await summaryMismatches(db, 'shapes'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
    })

    it('stores and folds a span whose model, vendor, service, user and session are all as long as a cut leaves them', async () => {
      const start = BigInt(Date.now()) * 1_000_000n
      const span: SpanInsert = {
        ...spanOf('keys', '1'.padStart(32, '0'), 1, start),
        serviceName: `s${longest}`.slice(0, -1), llmVendor: `v${longest}`.slice(0, -1), llmModel: `m${longest}`.slice(0, -1),
        llmResponseModel: `r${longest}`.slice(0, -1), sessionId: `x${longest}`.slice(0, -1), userId: `u${longest}`.slice(0, -1),
      }
      await storeSpans(db, [span])
      await summariseAll(db)
      const { rows } = await sql<{ user_id: string; session_id: string }>`select user_id, session_id from trace_summaries where project_id = 'keys'`.execute(db)
      assert.deepEqual(rows, [{ user_id: span.userId, session_id: span.sessionId }])
      assert.deepEqual(await summaryMismatches(db, 'keys'), { traces: 0, sessions: 0, rollups: 0, blocks: 0 })
    })
  })
}
