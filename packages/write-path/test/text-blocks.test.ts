import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { addWordsToTextBlocks, searchTraces, sql, type Db, type SpanInsert, type TraceSearch } from '@tracewell/db'
import { BlockFilter, blockFilterBits, PROBES, TEXT_BLOCK_MS, TextFilterWords, textFilterProbes } from '@tracewell/text-filter'
import { engines } from '@tracewell/db/testing'
import { storeAndSummarise } from './support/store-and-summarise.ts'
import { storeSpans, summariseAll } from '../src/index.ts'
import { traceDeltaOf } from '../src/trace-delta-layout.ts'

// Full-text search reads the word filters of blocks of ten minutes before the traces' own: a
// trace is only found if its words are in the block of its start, whatever order its spans came
// in and whichever writer stored them.

const hashesOf = (text: string): number[] => {
  const words = new TextFilterWords()
  words.addJson(Buffer.from(JSON.stringify(text)))
  return [...words.hashes()]
}

/** Whether a filter given as bytes holds every probe of `text`. */
function holds(hex: string, text: string): boolean {
  const bits = hex.length * 4
  const bytes = Buffer.from(hex, 'hex')
  return textFilterProbes(text).every((probe) => ((bytes[(probe & (bits - 1)) >>> 3] as number) & (0x80 >>> (probe & (bits - 1) & 7))) !== 0)
}

describe('block filter', () => {
  it('holds every word it was given, passes about 1% of others at its size, and counts each word once', () => {
    const given = Array.from({ length: 2_000 }, (_, i) => `given${i}`)
    const filter = BlockFilter.empty(blockFilterBits(given.length))
    assert.equal(blockFilterBits(given.length), 32_768, '10 bits a word, rounded up to a power of two')
    for (const word of given) for (const hash of hashesOf(word)) filter.add(hash)
    for (const hash of hashesOf('given7')) filter.add(hash)
    assert.ok(filter.words >= 1_990 && filter.words <= 2_000, `${filter.words} words counted for 2,000 given once and one again`)
    const hex = filter.toHex()
    for (const word of given) assert.ok(holds(hex, word), word)
    const passing = Array.from({ length: 10_000 }, (_, i) => `absent${i}`).filter((word) => holds(hex, word)).length
    assert.ok(passing < 100, `${passing} of 10,000 absent words pass (under 1% expected at 16 bits a word)`)
    const bitText = [...Buffer.from(hex, 'hex')].map((byte) => byte.toString(2).padStart(8, '0')).join('')
    assert.equal(BlockFilter.fromBitText(bitText, filter.words).toHex(), hex, 'read back from varbit text')
    assert.equal(blockFilterBits(0), 1_024)
    assert.equal(blockFilterBits(10_000_000), 1 << 20, 'capped at 128 KiB')
    assert.equal(textFilterProbes('one').length, PROBES)
  })
})

const second = 1_000_000_000n
/** A block boundary: 2026-01-01T00:00:00Z. */
const boundary = 1_767_225_600n * second
const blockNs = BigInt(TEXT_BLOCK_MS) * 1_000_000n

function span(projectId: string, traceId: string, spanId: string, text: string, startNs: bigint, parentSpanId: string | null = null, cost?: number): SpanInsert {
  return {
    projectId, traceId, spanId, parentSpanId, name: 'chat', kind: 1,
    startTimeUnixNano: String(startNs), endTimeUnixNano: String(startNs + second), durationNs: String(second),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: null, llmModel: null, llmRequestType: null, inputTokens: null, outputTokens: null, totalTokens: null,
    ...(cost === undefined ? {} : { totalCostUsd: cost }),
    attributes: { 'gen_ai.completion.0.content': { stringValue: text } },
    resourceAttributes: {}, events: [], links: [],
  }
}

for (const engine of engines) {
  describe(`full-text search by blocks on ${engine.name}`, { timeout: 120_000 }, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    const search = async (projectId: string, text: string, options: Partial<TraceSearch> = {}) =>
      searchTraces(db, { projectId, limit: 50, sort: 'time', order: 'desc', text, ...options })
    const found = async (projectId: string, text: string) => (await search(projectId, text)).traces.map((trace) => trace.traceId).sort()

    /** The block filter rows of a project: each block's start (ISO) and whether it holds `text`. */
    const blocksHolding = async (projectId: string, text: string) => {
      const { rows } = await sql<{ block: Date; filter: string }>`select block, filter::text as filter from trace_text_blocks where project_id = ${projectId} order by block`.execute(db)
      return rows.map((row) => {
        const hex = Buffer.from(row.filter.match(/.{8}/g)!.map((bits) => parseInt(bits, 2))).toString('hex')
        return [row.block.toISOString(), holds(hex, text)]
      })
    }

    it('a trace whose root arrives later, starting in the block before, takes every word of its spans there', async () => {
      const trace = '1'.repeat(32)
      await storeAndSummarise(db, [span('moved', trace, '0000000000000002', 'child answer mentions walrus', boundary + 30n * second, '0000000000000001')])
      assert.deepEqual(await blocksHolding('moved', 'walrus'), [['2026-01-01T00:00:00.000Z', true]])
      await storeAndSummarise(db, [span('moved', trace, '0000000000000001', 'root asks about pelicans', boundary - 30n * second)])
      assert.deepEqual(await blocksHolding('moved', 'walrus'), [['2025-12-31T23:50:00.000Z', true], ['2026-01-01T00:00:00.000Z', true]])
      assert.deepEqual(await blocksHolding('moved', 'pelicans'), [['2025-12-31T23:50:00.000Z', true], ['2026-01-01T00:00:00.000Z', false]])
      assert.deepEqual(await found('moved', 'walrus'), [trace], 'a word of the first batch, whose block the trace left')
      assert.deepEqual(await found('moved', 'pelicans'), [trace])
      assert.deepEqual(await found('moved', 'zebra'), [])
    })

    it('reads the words of a delta from a writer of an earlier version, which carried none, from its spans', async () => {
      const trace = '2'.repeat(32)
      await storeSpans(db, [span('legacy', trace, '0000000000000001', 'an earlier writer stored okapi', boundary)])
      // What such a writer wrote: named fields, and the trace's word filter instead of its words' hashes.
      const { rows } = await sql<{ id: string; traces: string }>`select id::text as id, traces from summary_deltas`.execute(db)
      for (const row of rows) {
        const named = (JSON.parse(row.traces) as unknown[]).map((entry) => ({ ...traceDeltaOf(entry), words: undefined, text_filter: 'ff' }))
        await sql`update summary_deltas set traces = ${JSON.stringify(named)} where id = ${row.id}::bigint`.execute(db)
      }
      await summariseAll(db)
      assert.deepEqual(await found('legacy', 'okapi'), [trace])
      assert.deepEqual(await blocksHolding('legacy', 'okapi'), [['2026-01-01T00:00:00.000Z', true]])
    })

    it('pages a time-sorted search block by block, newest first or oldest first, and sorts by cost across blocks', async () => {
      const ids = ['a', 'b', 'c', 'd'].map((c) => c.repeat(32))
      // Two traces in the newest block, one two blocks earlier, one a day earlier; one without the word.
      const starts = [boundary + 2n * blockNs + 5n * second, boundary + 2n * blockNs + second, boundary, boundary - 86_400n * second]
      await storeAndSummarise(db, [
        ...ids.map((id, i) => span('pages', id, '0000000000000001', `common word, trace ${i}`, starts[i] as bigint, null, [0.5, 0.1, 0.9, 0.3][i])),
        span('pages', 'e'.repeat(32), '0000000000000001', 'nothing in common', boundary + second),
      ])
      const first = await search('pages', 'common word', { limit: 2 })
      assert.deepEqual(first.traces.map((trace) => trace.traceId), [ids[0], ids[1]])
      const rest = await search('pages', 'common word', { limit: 2, cursor: first.next! })
      assert.deepEqual(rest.traces.map((trace) => trace.traceId), [ids[2], ids[3]])
      assert.equal(rest.next, null, 'the last page')
      assert.deepEqual((await search('pages', 'common word', { order: 'asc' })).traces.map((trace) => trace.traceId), [ids[3], ids[2], ids[1], ids[0]])
      assert.deepEqual((await search('pages', 'common word', { sort: 'cost' })).traces.map((trace) => trace.traceId), [ids[2], ids[0], ids[3], ids[1]])
      const window = { from: new Date(Number((boundary + 2n * blockNs) / 1_000_000n) + 3_000), to: new Date(Number((boundary + 3n * blockNs) / 1_000_000n)) }
      assert.deepEqual((await search('pages', 'common', window)).traces.map((trace) => trace.traceId), [ids[0]], 'from inside a block: its traces before `from` are left out')
    })

    it('sizes a new block from the words its project\'s previous block was given', async () => {
      const words = (count: number, prefix: string) => {
        const into = new TextFilterWords()
        into.addJson(Buffer.from(JSON.stringify(Array.from({ length: count }, (_, i) => `${prefix}${i}`).join(' '))))
        return into
      }
      const blockMs = Number(boundary / 1_000_000n)
      await addWordsToTextBlocks(db, [{ projectId: 'sizes', blockMs, words: words(3_000, 'busy') }])
      await addWordsToTextBlocks(db, [{ projectId: 'sizes', blockMs: blockMs + TEXT_BLOCK_MS, words: words(1, 'quiet') }])
      await addWordsToTextBlocks(db, [{ projectId: 'sizes', blockMs: blockMs + TEXT_BLOCK_MS, words: words(5, 'quiet') }])
      const { rows } = await sql<{ bits: number; words: number }>`select length(filter) as bits, words from trace_text_blocks where project_id = 'sizes' order by block`.execute(db)
      assert.deepEqual(rows, [{ bits: 32_768, words: rows[0]!.words }, { bits: 32_768, words: 5 }])
      assert.ok(rows[0]!.words > 2_950, `${rows[0]!.words} of 3,000 words counted`)
    })
  })
}
