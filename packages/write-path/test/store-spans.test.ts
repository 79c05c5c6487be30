import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { JsonTextBytes } from '@tracewell/json-text'
import { countSpans, createDb, findTraceSpans, nanosToIsoMicros, poolOf, sql, type Db, type SpanDto, type SpanInsert } from '@tracewell/db'
import { SpanCopyEncoder, storeSpans, type ProjectSpanSource } from '../src/index.ts'
import { copySpans, insertSpans } from '../src/span-store.ts'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { engines } from '@tracewell/db/testing'
import { storeByStatement } from './support/store-and-summarise.ts'
import { spanGenerator, storable, type SpanFields } from './support/random-spans.ts'

const { randomSpan } = spanGenerator(2026)
const batch = (projectId: string, size: number, unstorable = false): SpanInsert[] =>
  Array.from({ length: size }, () => ({ ...randomSpan(unstorable), projectId }))

/** Every stored column but received_at, as Postgres prints it (exact bigints, microseconds, jsonb). */
async function storedRows(db: Db, projectId: string): Promise<string[]> {
  const { rows } = await sql<{ row: string }>`
    select (to_jsonb(spans) - 'received_at' - 'project_id')::text as row from spans
    where project_id = ${projectId} order by trace_id, span_id`.execute(db)
  return rows.map(({ row }) => row)
}

/** What findTraceSpans should return for a span, written from the span alone. */
function expectedDto(span: SpanFields): SpanDto {
  const s = storable(span)
  const micros = (nanos: string) => `${BigInt(nanos) / 1000n}`
  return {
    traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId, name: s.name, kind: s.kind,
    startTime: nanosToIsoMicros(s.startTimeUnixNano), endTime: nanosToIsoMicros(s.endTimeUnixNano),
    startTimeUnixNano: `${micros(s.startTimeUnixNano)}000`, endTimeUnixNano: `${micros(s.endTimeUnixNano)}000`,
    durationNs: s.durationNs, traceState: s.traceState, status: { code: s.statusCode, message: s.statusMessage },
    serviceName: s.serviceName, serviceVersion: s.serviceVersion, scopeName: s.scopeName, scopeVersion: s.scopeVersion,
    llmVendor: s.llmVendor, llmModel: s.llmModel, llmRequestType: s.llmRequestType,
    inputTokens: s.inputTokens, outputTokens: s.outputTokens, totalTokens: s.totalTokens,
    llmResponseModel: s.llmResponseModel ?? null, cachedInputTokens: s.cachedInputTokens ?? null, cacheWriteInputTokens: s.cacheWriteInputTokens ?? null,
    reasoningTokens: s.reasoningTokens ?? null, sessionId: s.sessionId ?? null, userId: s.userId ?? null,
    inputCostUsd: s.inputCostUsd ?? null, outputCostUsd: s.outputCostUsd ?? null, totalCostUsd: s.totalCostUsd ?? null, costSource: s.costSource ?? null,
    tokensEstimated: s.tokensEstimated ?? false,
    attributes: s.attributes, resourceAttributes: s.resourceAttributes, events: s.events, links: s.links, receivedAt: '',
  }
}

async function assertStoredAsInserted(db: Db, spans: readonly SpanFields[], copied: string, inserted: string): Promise<void> {
  assert.deepEqual(await storedRows(db, copied), await storedRows(db, inserted))
  for (const span of spans) {
    const [stored] = await findTraceSpans(db, copied, span.traceId)
    assert.ok(stored, `span ${span.traceId} stored`)
    assert.deepEqual({ ...stored, receivedAt: '' }, expectedDto(span))
  }
}

for (const engine of engines) {
  describe(`storeSpans on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('stores every column exactly as the statement path does', async () => {
      const spans = Array.from({ length: 600 }, (_, i) => randomSpan(i % 2 === 0))
      // Several projects in one batch, and project ids that are awkward text themselves.
      const projects = ['plain', 'p"\\q', 'Zoë\0😀']
      const withProject = (prefix: string) => spans.map((span, i) => ({ ...span, projectId: `${prefix} ${projects[i % 3]}` }))
      const encoder = new SpanCopyEncoder()
      assert.ok(encoder.add({ projectId: 'copy', spans: () => spans }))
      encoder.finish()
      assert.ok(encoder.chunks.length > 2, 'the batch is COPY data of several chunks')
      assert.equal((await storeSpans(db, withProject('copy'))).inserted, spans.length)
      assert.equal(await storeByStatement(db, withProject('insert')), spans.length)
      for (const [index, project] of projects.entries()) {
        await assertStoredAsInserted(db, spans.filter((_, i) => i % 3 === index), storable(`copy ${project}`), storable(`insert ${project}`))
      }
    })

    it('stores the edges of its integer columns as the statement path does', async () => {
      const base = randomSpan(false)
      const edges: Array<Partial<SpanFields>> = [
        { durationNs: '-5' }, { durationNs: '-9223372036854775808' }, { durationNs: '9007199254740993' }, { durationNs: '0' },
        { startTimeUnixNano: '1999', endTimeUnixNano: '2000' }, { startTimeUnixNano: '946684799999999999', endTimeUnixNano: '946684800000000000' },
        { startTimeUnixNano: '9007199254740991999', endTimeUnixNano: '9007199254740992000' },
        { inputTokens: 2 ** 53 - 1, outputTokens: 0, totalTokens: 4_294_967_296, reasoningTokens: 4_294_967_295 },
      ]
      // A trace each: assertStoredAsInserted reads each span back as its trace's first.
      const spans = edges.map((edge, i) => ({ ...base, ...edge, traceId: `${i}`.padStart(32, '0') }))
      assert.equal((await storeSpans(db, spans.map((span) => ({ ...span, projectId: 'edges copy' })))).inserted, spans.length)
      assert.equal(await storeByStatement(db, spans.map((span) => ({ ...span, projectId: 'edges insert' }))), spans.length)
      await assertStoredAsInserted(db, spans, 'edges copy', 'edges insert')
    })

    it('stores resource attributes shared by reference between spans, as the decoder shares them, as the statement path does', async () => {
      const [first, second] = [randomSpan(true), randomSpan(false)]
      // Spans of one resource, then another, then the first again, a COPY chunk boundary among them.
      const owners = [first, first, second, first, ...Array.from({ length: 400 }, () => second), first]
      const spans = owners.map((owner, i) => ({ ...randomSpan(i % 2 === 0), resourceAttributes: owner.resourceAttributes, events: [], links: [] }))
      assert.equal((await storeSpans(db, spans.map((span) => ({ ...span, projectId: 'shared copy' })))).inserted, spans.length)
      assert.equal(await storeByStatement(db, spans.map((span) => ({ ...span, projectId: 'shared insert' }))), spans.length)
      assert.deepEqual(await storedRows(db, 'shared copy'), await storedRows(db, 'shared insert'))
    })

    it('stores values larger than a COPY chunk', async () => {
      const span = randomSpan(false)
      const large = {
        ...span,
        name: 'n\0\ud800'.repeat(50_000),
        attributes: { big: { stringValue: 'é😀\ud800"\\'.repeat(60_000) }, small: { intValue: '1' } },
        events: Array.from({ length: 2_000 }, (_, i) => ({ name: `event ${i}`, timeUnixNano: span.startTimeUnixNano, attributes: {} })),
      }
      assert.equal((await storeSpans(db, [{ ...large, projectId: 'large copy' }, ...batch('large copy', 3)])).inserted, 4)
      assert.equal(await storeByStatement(db, [{ ...large, projectId: 'large insert' }]), 1)
      const [copied] = await storedRows(db, 'large copy').then((rows) => rows.filter((row) => row.includes(span.traceId)))
      assert.deepEqual([copied], await storedRows(db, 'large insert'))
      const [stored] = await findTraceSpans(db, 'large copy', span.traceId)
      assert.deepEqual({ ...stored, receivedAt: '' }, expectedDto(large))
    })

    it('stores U+0000 and lone surrogates as U+FFFD, and text spelling an escape as it is', async () => {
      const span = {
        ...randomSpan(false),
        name: 'a\0b\ud800c',
        statusMessage: '\udc00',
        serviceName: 'svc\0',
        attributes: {
          'k\0\udfff': { stringValue: 'v\0\ud83d' },
          'pair': { stringValue: '\ud83d\ude00' },
          'literal': { stringValue: String.raw`\u0000 \ud800 \\u0000` },
          'llm.request.messages': { stringValue: JSON.stringify([{ content: '\0\ud800' }]) },
        },
        resourceAttributes: { 'service.name': { stringValue: 'svc\0' } },
        events: [{ name: '\0', timeUnixNano: '1', attributes: { '\ud800': { boolValue: true } } }],
        links: [{ traceId: 'ab', spanId: 'cd', traceState: '\udc00x', attributes: {} }],
      }
      const expected = {
        name: 'a\ufffdb\ufffdc',
        status: { code: span.statusCode, message: '\ufffd' },
        serviceName: 'svc\ufffd',
        attributes: {
          'k\ufffd\ufffd': { stringValue: 'v\ufffd\ufffd' },
          'pair': { stringValue: '😀' },
          'literal': { stringValue: String.raw`\u0000 \ud800 \\u0000` },
          'llm.request.messages': { stringValue: String.raw`[{"content":"\u0000\ud800"}]` },
        },
        resourceAttributes: { 'service.name': { stringValue: 'svc\ufffd' } },
        events: [{ name: '\ufffd', timeUnixNano: '1', attributes: { '\ufffd': { boolValue: true } } }],
        links: [{ traceId: 'ab', spanId: 'cd', traceState: '\ufffdx', attributes: {} }],
      }
      assert.equal((await storeSpans(db, [{ ...span, projectId: 'nul copy' }])).inserted, 1)
      assert.equal(await storeByStatement(db, [{ ...span, projectId: 'nul insert' }]), 1)
      for (const projectId of ['nul copy', 'nul insert']) {
        const [stored] = await findTraceSpans(db, projectId, span.traceId)
        assert.ok(stored)
        const { name, status, serviceName, attributes, resourceAttributes, events, links } = stored
        assert.deepEqual({ name, status, serviceName, attributes, resourceAttributes, events, links }, expected, projectId)
      }
      assert.deepEqual(await storedRows(db, 'nul copy'), await storedRows(db, 'nul insert'))
    })

    it('stores attributes and events given as their queued JSON text exactly as given as objects, on both paths', async () => {
      const spans = Array.from({ length: 300 }, (_, i) => randomSpan(i % 2 === 0))
      spans.push({ ...randomSpan(true), attributes: { big: { stringValue: 'é😀\ud800"\\'.repeat(60_000) } } })
      const asText = (value: unknown) => new JsonTextBytes(Buffer.from(JSON.stringify(value)))
      const queued = spans.map((span) => ({ ...span, attributes: asText(span.attributes), events: asText(span.events) }))
      const stored = async (prefix: string, given: readonly SpanFields[] | typeof queued) => {
        assert.equal((await storeSpans(db, given.map((span) => ({ ...span, projectId: `${prefix} stored` })))).inserted, given.length)
        assert.equal(await storeByStatement(db, given.map((span) => ({ ...span, projectId: `${prefix} by statement` }))), given.length)
      }
      await stored('objects', spans)
      await stored('texts', queued)
      const objects = await storedRows(db, 'objects stored')
      for (const projectId of ['objects by statement', 'texts stored', 'texts by statement']) assert.deepEqual(await storedRows(db, projectId), objects, projectId)
      // Full-text search reads the same words from either.
      const searchable = (given: readonly SpanFields[] | typeof queued) => {
        const texts: string[] = []
        const encoder = new SpanCopyEncoder({ span: () => {}, searchableText: (bytes, start, end) => texts.push(Buffer.from(bytes.subarray(start, end)).toString()), sourceEnd: () => {} })
        assert.ok(encoder.add({ projectId: 'p', spans: () => given }))
        return texts
      }
      assert.deepEqual(searchable(queued), searchable(spans))
    })

    it('stores only the new spans of a batch holding stored ones, and a span twice in a batch once', async () => {
      const stored = batch('redelivered', 5)
      assert.equal((await storeSpans(db, stored)).inserted, 5)
      const fresh = batch('redelivered', 5)
      assert.equal((await storeSpans(db, [...fresh.slice(0, 2), ...stored, ...fresh.slice(2)])).inserted, 5)
      assert.equal((await storeSpans(db, stored)).inserted, 0)
      assert.equal(await countSpans(db, 'redelivered'), 10)

      const [twice, other] = batch('twice', 2) as [SpanInsert, SpanInsert]
      assert.equal((await storeSpans(db, [twice, other, { ...twice, name: 'the later copy' }])).inserted, 2)
      assert.equal(await storeByStatement(db, [twice, other].map((span) => ({ ...span, projectId: 'twice insert' }))), 2)
      assert.deepEqual(await storedRows(db, 'twice'), await storedRows(db, 'twice insert'), 'the first copy stored')
    })

    it('stores sources asking each for its spans once, and again only when the batch falls back', async () => {
      const asked = new Map<string, number>()
      const source = (name: string, spans: SpanInsert[]): ProjectSpanSource => ({
        projectId: 'sources',
        spans: () => {
          asked.set(name, (asked.get(name) ?? 0) + 1)
          return spans
        },
      })
      const first = batch('sources', 3)
      const second = batch('sources', 2)
      assert.deepEqual(await storeSpans(db, [source('first', first), source('second', second)]), { inserted: 5, duplicates: 0 })
      // PGlite has no COPY: the statement path is its only path, one request for spans each.
      assert.deepEqual(Object.fromEntries(asked), { first: 1, second: 1 })

      asked.clear()
      const third = batch('sources', 4)
      assert.deepEqual(await storeSpans(db, [source('second', second), source('third', third)]), { inserted: 4, duplicates: 2 })
      // On Postgres the COPY asks first and its unique violation makes the fallback ask again.
      const expected = engine.name === 'postgres' ? 2 : 1
      assert.deepEqual(Object.fromEntries(asked), { second: expected, third: expected })
      assert.equal(await countSpans(db, 'sources'), 9)
      assert.deepEqual(await storeSpans(db, []), { inserted: 0, duplicates: 0 })
    })

    it('copySpans asks each source once and leaves a batch it cannot copy to insertSpans, storing none of it', async () => {
      let asked = 0
      const source = (spans: SpanInsert[]): ProjectSpanSource => ({
        projectId: 'halves',
        spans: () => {
          asked++
          return spans
        },
      })
      const first = batch('halves', 3)
      const copied = await copySpans(db, [source(first)])
      // PGlite has no COPY: every batch goes by statement.
      assert.equal(copied, engine.name === 'postgres' ? 3 : undefined)
      assert.equal(asked, engine.name === 'postgres' ? 1 : 0)
      if (copied === undefined) assert.deepEqual(await insertSpans(db, [source(first)]), { inserted: 3, duplicates: 0 })

      asked = 0
      const more = [...first, ...batch('halves more', 2)]
      assert.equal(await copySpans(db, [source(more)]), undefined, 'a span already stored: rolled back')
      assert.equal(await countSpans(db, 'halves'), 3)
      assert.deepEqual(await insertSpans(db, [source(more)]), { inserted: 2, duplicates: 3 })
      assert.equal(asked, engine.name === 'postgres' ? 2 : 1)
      assert.equal(await countSpans(db, 'halves'), 5)
    })

    it('falls back in statements of at most 5,000 spans, keeping each source whole', async () => {
      const base = batch('many', 1)[0] as SpanInsert
      const spans = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ ...base, spanId: (from + i).toString(16).padStart(16, '0') }))
      const sources = [spans(0, 3_000), spans(3_000, 3_000), spans(6_000, 1)].map((run): ProjectSpanSource => ({ projectId: 'many', spans: () => run }))
      assert.deepEqual(await storeSpans(db, sources.slice(0, 1)), { inserted: 3_000, duplicates: 0 })
      assert.deepEqual(await storeSpans(db, sources), { inserted: 3_001, duplicates: 3_000 })
      assert.equal(await countSpans(db, 'many'), 6_001)
    })

    it('throws any other error unchanged and stores nothing of the batch', async () => {
      const spans = batch('failing', 10)
      const withNullName = spans.map((span, i) => (i === 7 ? { ...span, name: null as unknown as string } : span))
      await assert.rejects(storeSpans(db, withNullName), { code: '23502' })
      // A value the COPY encoder leaves to the statement path: the statement's own error.
      const outOfRange = spans.map((span, i) => (i === 3 ? { ...span, kind: 40_000 } : span))
      await assert.rejects(storeSpans(db, outOfRange), { code: '22003' })
      assert.equal(await countSpans(db, 'failing'), 0)
      assert.equal((await storeSpans(db, spans)).inserted, 10)
      assert.equal((await storeSpans(db, [])).inserted, 0)
    })
  })
}

describe('storeSpans on postgres: connections', () => {
  let database: TestDatabase
  before(async () => (database = await createTestDatabase({ poolSize: 3 })))
  after(() => database.drop())

  const poolOfDatabase = () => {
    const pool = poolOf.get(database.db)
    assert.ok(pool)
    return pool
  }

  it('COPYs, and falls back to the statement only on a conflict', async () => {
    const pool = poolOfDatabase()
    let acquired = 0
    const onAcquire = () => acquired++
    pool.on('acquire', onAcquire)
    try {
      const spans = batch('paths', 4)
      assert.equal((await storeSpans(database.db, spans.slice(0, 2))).inserted, 2)
      assert.equal(acquired, 1, 'one connection: the COPY')
      assert.equal((await storeSpans(database.db, spans)).inserted, 2)
      assert.equal(acquired, 3, 'the COPY, then the statement')
    } finally {
      pool.off('acquire', onAcquire)
    }
  })

  it('returns the connection to the pool after success, conflict and failure', async () => {
    const pool = poolOfDatabase()
    // Three times the pool's size, one after the other: a connection kept would starve the pool.
    for (let round = 0; round < 9; round++) {
      const spans = batch(`round ${round}`, 20)
      assert.equal((await storeSpans(database.db, spans)).inserted, 20)
      assert.equal((await storeSpans(database.db, [...spans, ...batch(`round ${round}`, 1)])).inserted, 1)
      await assert.rejects(storeSpans(database.db, [{ ...spans[0], name: null } as unknown as SpanInsert]), { code: '23502' })
    }
    assert.equal(pool.waitingCount, 0)
    assert.equal(pool.idleCount, pool.totalCount)
    assert.ok(pool.totalCount <= 3)
  })

  it('destroys a connection that broke during the COPY, and throws its error', async () => {
    const pool = poolOfDatabase()
    let removed = 0
    const onRemove = () => removed++
    pool.on('remove', onRemove)
    // The COPY waits for a lock held here; this connection then ends the COPY's backend.
    const locker = await pool.connect()
    try {
      await locker.query('begin')
      await locker.query('lock table spans in share mode')
      const storing = storeSpans(database.db, batch('broken', 50))
      const rejected = assert.rejects(storing, { code: '57P01' })
      let pid: number | undefined
      const deadline = Date.now() + 10_000
      while (pid === undefined) {
        assert.ok(Date.now() < deadline, 'the COPY never waited for the lock')
        await sleep(10)
        // pg_stat_activity is a snapshot frozen for the rest of a transaction: clear it, or this
        // loop would see the view as it was before the COPY started, for ever.
        await locker.query('select pg_stat_clear_snapshot()')
        const { rows } = await locker.query<{ pid: number }>(
          `select pid from pg_stat_activity where datname = current_database() and query like 'copy spans%' and wait_event_type = 'Lock'`,
        )
        pid = rows[0]?.pid
      }
      await locker.query('select pg_terminate_backend($1)', [pid])
      await locker.query('rollback')
      await rejected
    } finally {
      locker.release()
      pool.off('remove', onRemove)
    }
    assert.equal(removed, 1, 'the broken connection left the pool')
    assert.equal(pool.idleCount, pool.totalCount)
    assert.equal((await storeSpans(database.db, batch('broken', 50))).inserted, 50)
  })

  // The COPY is sent while it is encoded, one source after another: what is found late in a
  // batch meets a COPY that already holds its earlier rows.
  const manySources = (projectId: string, sources: number, spansEach: number): ProjectSpanSource[] =>
    Array.from({ length: sources }, () => {
      const spans = batch(projectId, spansEach)
      return { projectId, spans: () => spans }
    })
  const assertPoolIdle = () => {
    const pool = poolOfDatabase()
    assert.equal(pool.waitingCount, 0)
    assert.equal(pool.idleCount, pool.totalCount)
  }

  it('leaves a batch to the statements when its last source holds a value only they store, after earlier chunks were sent', async () => {
    const sources = manySources('late value', 4, 300)
    // A negative cost: the encoder leaves numbers it does not write exactly as numeric_in reads them to the statement.
    const negative = { ...(batch('late value', 1)[0] as SpanInsert), inputCostUsd: -0.25 }
    sources.push({ projectId: 'late value', spans: () => [negative] })
    assert.equal(await copySpans(database.db, sources), undefined)
    assert.equal(await countSpans(database.db, 'late value'), 0, 'the rows already sent were rolled back')
    assertPoolIdle()
    assert.deepEqual(await storeSpans(database.db, sources), { inserted: 1_201, duplicates: 0 })
  })

  it('rolls back and falls back when a stored span is met while later sources are still being sent', async () => {
    const [stored, ...rest] = manySources('met early', 8, 300) as [ProjectSpanSource, ...ProjectSpanSource[]]
    assert.equal(await storeSpans(database.db, [stored]).then((result) => result.inserted), 300)
    assert.equal(await copySpans(database.db, [stored, ...rest]), undefined)
    assert.equal(await countSpans(database.db, 'met early'), 300)
    assertPoolIdle()
    assert.deepEqual(await storeSpans(database.db, [stored, ...rest]), { inserted: 2_100, duplicates: 300 })
  })

  it('throws the error of a source that cannot give its spans mid-COPY, storing nothing and keeping the connection', async () => {
    const sources = manySources('source fails', 3, 300)
    sources.push({
      projectId: 'source fails',
      spans: () => {
        throw new Error('body 3 no longer decodes')
      },
    })
    await assert.rejects(copySpans(database.db, sources), /body 3 no longer decodes/)
    assert.equal(await countSpans(database.db, 'source fails'), 0)
    assertPoolIdle()
    assert.equal((await storeSpans(database.db, batch('source fails', 5))).inserted, 5)
  })

  it('throws when the pool is closed', async () => {
    const closed = createDb({ databaseUrl: database.url, poolSize: 1 })
    // Kysely ends the pool on destroy() only once it has run a query.
    assert.equal(await countSpans(closed, 'closed'), 0)
    await closed.destroy()
    await assert.rejects(storeSpans(closed, batch('closed', 2)), /pool/i)
    assert.equal(await countSpans(database.db, 'closed'), 0)
  })
})
