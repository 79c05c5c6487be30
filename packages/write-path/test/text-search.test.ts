import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { backfillTraceTextFilters, searchTraces, sql, type Db, type SpanInsert } from '@tracewell/db'
import { PROBES, TextFilterWords, textFilterProbes } from '@tracewell/text-filter'
import { engines } from '@tracewell/db/testing'
import { storeAndSummarise, storeByStatement } from './support/store-and-summarise.ts'
import { summariseAll } from '../src/index.ts'

/** The distinct words' hashes of `text` (as a JSON string, as attributes hold it), as the writer's tokenizer finds them, sorted. */
const words = (text: string): number[] => {
  const filter = new TextFilterWords()
  filter.addJson(Buffer.from(JSON.stringify(text)))
  return [...filter.hashes()].sort((a, b) => a - b)
}
const hashOf = (word: string): number => words(word)[0] as number

/** Whether a filter (hex, as stored) holds every probe of `text`. */
function holds(hex: string, text: string): boolean {
  const bits = hex.length * 4
  const bytes = Buffer.from(hex, 'hex')
  return textFilterProbes(text).every((probe) => {
    const bit = probe & (bits - 1)
    return ((bytes[bit >>> 3] as number) & (0x80 >>> (bit & 7))) !== 0
  })
}

describe('text filter words', () => {
  it('splits on everything but ASCII letters, digits and characters of the Basic Multilingual Plane above U+007F, lowercased', () => {
    const sorted = (hashes: number[]) => hashes.sort((a, b) => a - b)
    assert.deepEqual(words('Refund, order #42: "naïve" café_au-lait x\ny'), sorted(['refund', 'order', '42', 'naïve', 'café', 'au', 'lait', 'x', 'y'].map(hashOf)))
    assert.equal(words('Refund refund REFUND').length, 1, 'repeats are one word')
    assert.equal(hashOf('HELLO'), hashOf('hello'))
    assert.equal(hashOf('ÄRGER'), hashOf('ärger'), 'accented capitals are lowercased too')
    assert.deepEqual(words('hi😀there'), sorted([hashOf('hi'), hashOf('there')]), 'an emoji separates words')
    assert.deepEqual(words('tab\tquote"back\\slash\u0001bell'), sorted(['tab', 'quote', 'back', 'slash', 'bell'].map(hashOf)), 'JSON escapes separate words')
    assert.deepEqual(words('日本語のテキスト'), [hashOf('日本語のテキスト')], 'three-byte characters are word characters')
    assert.deepEqual(words('  ...  '), [])
  })

  it('a filter holds every word it was given, and few it was not', () => {
    const filter = new TextFilterWords()
    const given = Array.from({ length: 500 }, (_, i) => `word${i}`)
    filter.addJson(Buffer.from(JSON.stringify({ prompt: { stringValue: given.join(' ') }, nested: { arrayValue: { values: [{ stringValue: 'deep inside' }] } } })))
    const hex = filter.toHex() as string
    // 500 words, 2 more values and 5 key words take 16 bits each (8,112), rounded up to a power of two.
    assert.equal(hex.length * 4, 8192)
    for (const word of [...given, 'deep', 'inside', 'WORD7', 'prompt', 'stringValue']) assert.ok(holds(hex, word), word)
    const falsePositives = Array.from({ length: 10_000 }, (_, i) => `absent${i}`).filter((word) => holds(hex, word)).length
    assert.ok(falsePositives < 50, `${falsePositives} of 10,000 absent words pass (expected under 0.5%)`)
    assert.equal(new TextFilterWords().toHex(), null, 'no words, no filter')
    assert.equal(textFilterProbes('a b a').length, 2 * PROBES)
  })

  it('reads the same words from a JSON text and from its bytes in a larger buffer', () => {
    const attributes = { 'gen_ai.prompt': { stringValue: 'Ärger über die Lieferung, order #77\n' } }
    const json = Buffer.from(JSON.stringify(attributes))
    const framed = Buffer.concat([Buffer.from('xx prefix '), json, Buffer.from(' suffix yy')])
    const fromBytes = new TextFilterWords()
    fromBytes.addJson(framed, 10, 10 + json.length)
    const fromValue = new TextFilterWords()
    fromValue.addJson(Buffer.from(JSON.stringify(attributes)))
    assert.deepEqual(fromBytes.toHex(), fromValue.toHex())
    assert.ok(holds(fromBytes.toHex() as string, 'ärger') && holds(fromBytes.toHex() as string, 'LIEFERUNG'))
    assert.ok(!holds(fromBytes.toHex() as string, 'prefix') || !holds(fromBytes.toHex() as string, 'suffix'), 'only the given range is read')
  })
})

const second = 1_000_000_000n
const t0 = 1_767_225_600n * second

function span(traceId: string, spanId: string, text: string, startNs = t0): SpanInsert {
  return {
    projectId: 'search', traceId, spanId, parentSpanId: null, name: 'chat', kind: 1,
    startTimeUnixNano: String(startNs), endTimeUnixNano: String(startNs + second), durationNs: String(second),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    attributes: { 'gen_ai.prompt.0.content': { stringValue: text }, 'gen_ai.prompt.0.role': { stringValue: 'user' } },
    resourceAttributes: {}, events: [], links: [],
  }
}

for (const engine of engines) {
  describe(`full-text search on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    const traceA = 'a'.repeat(32)
    const traceB = 'b'.repeat(32)
    const traceC = 'c'.repeat(32)
    const found = async (text: string) =>
      (await searchTraces(db, { projectId: 'search', limit: 50, sort: 'time', order: 'desc', text })).traces.map((trace) => trace.traceId).sort()

    before(async () => {
      await storeAndSummarise(db, [span(traceA, '0000000000000001', 'Where is my refund for order 77777?'), span(traceB, '0000000000000001', 'Ärger mit der Lieferung')])
      // Trace A again, in a later batch with many words: a larger filter, the stored one repeated to its size.
      const many = Array.from({ length: 300 }, (_, i) => `term${i}`).join(' ')
      await storeAndSummarise(db, [span(traceA, '0000000000000002', `The answer mentioned zebra. ${many}`, t0 + second), span(traceC, '0000000000000001', 'word77777 and nothing else')])
    })

    it('finds traces holding every word, in any batch of theirs, case-insensitively', async () => {
      assert.deepEqual(await found('refund'), [traceA], 'a word of the first batch')
      assert.deepEqual(await found('ZEBRA'), [traceA], 'a word of the second batch')
      assert.deepEqual(await found('term299'), [traceA])
      assert.deepEqual(await found('ärger'), [traceB])
      assert.deepEqual(await found('user'), [traceA, traceB, traceC])
      assert.deepEqual(await found('Lieferung'), [traceB])
      assert.deepEqual(await found('order 77777'), [traceA], 'a phrase')
      assert.deepEqual(await found('word77777 '), [traceC])
    })

    it('matches whole words only, and the text as contained in one span', async () => {
      assert.deepEqual(await found('Lieferun'), [])
      assert.deepEqual(await found('7777'), [], 'part of a word')
      assert.deepEqual(await found('refun'), [])
      assert.deepEqual(await found('refund zebra'), [], 'both words are in trace A, not as this phrase')
      assert.deepEqual(await found('absentword'), [])
      assert.deepEqual(await found('gen_ai.prompt.0.role'), [traceA, traceB, traceC], 'attribute keys are text too')
    })

    it('the migration computes the filters of traces stored before it, the same as the writer', async () => {
      const filters = async () => (await sql<{ trace_id: string; filter: string }>`select trace_id, text_filter::text as filter from trace_summaries where project_id = 'search' order by trace_id`.execute(db)).rows
      const written = await filters()
      assert.equal(written.length, 3)
      await sql`update trace_summaries set text_filter = null where project_id = 'search'`.execute(db)
      assert.deepEqual(await found('zebra'), [], 'without a filter a trace cannot match')
      await backfillTraceTextFilters(db)
      const backfilled = await filters()
      // The backfill sees trace A's spans together (one filter of their size), the writer in two
      // batches (the smaller repeated): each must still hold every word.
      assert.deepEqual(backfilled.filter((row) => row.trace_id !== traceA), written.filter((row) => row.trace_id !== traceA))
      assert.deepEqual(await found('refund'), [traceA])
      assert.deepEqual(await found('zebra'), [traceA])
      assert.deepEqual(await found('ärger'), [traceB])
    })

    it('finds what users see beyond attributes: event names and attributes, and exception messages', async () => {
      // A project of its own: the tests above count the traces of 'search'.
      const inProject = (spanInsert: SpanInsert): SpanInsert => ({ ...spanInsert, projectId: 'search events' })
      const foundHere = async (text: string) =>
        (await searchTraces(db, { projectId: 'search events', limit: 50, sort: 'time', order: 'desc', text })).traces.map((trace) => trace.traceId).sort()
      const traceD = 'd'.repeat(32)
      const traceE = 'e'.repeat(32)
      await storeAndSummarise(db, [
        // The Langtrace TypeScript SDK records the prompt as an event.
        inProject({ ...span(traceD, '0000000000000001', 'nothing here'), events: [{ timeUnixNano: String(t0), name: 'gen_ai.content.prompt', attributes: { 'gen_ai.prompt': { stringValue: 'Tell me about the pangolin' } } }] }),
        inProject({ ...span(traceE, '0000000000000001', 'nothing either'), statusCode: 2, statusMessage: 'RateLimitError: quota exhausted for the organisation' }),
      ])
      assert.deepEqual(await foundHere('pangolin'), [traceD], "an event's attribute")
      assert.deepEqual(await foundHere('gen_ai.content.prompt'), [traceD], "an event's name")
      assert.deepEqual(await foundHere('quota exhausted'), [traceE], 'an exception message')
      // Stored by statements too (a redelivered batch), the words are the same.
      const traceF = 'f'.repeat(32)
      await storeByStatement(db, [inProject({ ...span(traceF, '0000000000000001', 'plain'), events: [{ timeUnixNano: String(t0), name: 'log', attributes: { message: { stringValue: 'an okapi appeared' } } }] })])
      await summariseAll(db)
      assert.deepEqual(await foundHere('okapi'), [traceF])
    })

    it('the migration reaches every trace across its batches, traces starting a microsecond apart or together included', async () => {
      const micro = 1_000n
      // Seven traces in the other project: d0 and d1 at t0, then d2…d6 a microsecond apart.
      const starts = [0n, 0n, micro, 2n * micro, 3n * micro, 4n * micro, 5n * micro]
      const traces = starts.map((offset, i) => ({ traceId: `d${i}`.padEnd(32, '0'), start: t0 + offset }))
      await storeAndSummarise(db, traces.map(({ traceId, start }) => ({ ...span(traceId, '0000000000000001', `needle${traceId.slice(0, 2)}`, start), projectId: 'batches' })))
      await sql`update trace_summaries set text_filter = null where project_id = 'batches'`.execute(db)
      await backfillTraceTextFilters(db, { tracesPerBatch: 2 })
      for (const { traceId } of traces) {
        const { traces: hits } = await searchTraces(db, { projectId: 'batches', limit: 50, sort: 'time', order: 'desc', text: `needle${traceId.slice(0, 2)}` })
        assert.deepEqual(hits.map((hit) => hit.traceId), [traceId])
      }
    })
  })
}
