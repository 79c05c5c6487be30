import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { decodeJsonTraces, decodeProtobufTraces, decodeSpanRecords, decodeTraceBody, encodeSpanRecords, MalformedSpanRecordsError } from '../src/index.ts'
import { Random, randomBatch, toOtlpJson, toProtobuf } from './support/random-batch.ts'

// The queue carries what ingest decoded as a 'records' body; the writer stores what it parses
// back. Anything the round trip changed would be stored differently from what ingest counted.

const conventions = new URL('../../../test-fixtures/llm-conventions/', import.meta.url)
const llmBodies = readdirSync(conventions).filter((name) => name.endsWith('.json')).map((name) => ({ name, body: readFileSync(new URL(name, conventions)) }))

describe('a records body', () => {
  it('gives back every span of every LLM convention with its derived fields', () => {
    assert.ok(llmBodies.length >= 5)
    for (const { name, body } of llmBodies) {
      const spans = decodeTraceBody(body, 'json').spans
      assert.ok(spans.some((span) => span.llmModel !== null), `${name} has an LLM span`)
      assert.deepStrictEqual(decodeSpanRecords(encodeSpanRecords(spans)), spans, name)
    }
  })

  it('gives back random batches from JSON and protobuf exactly', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const batch = randomBatch(new Random(seed))
      for (const spans of [decodeJsonTraces(toOtlpJson(batch, 'map', seed)).spans, decodeProtobufTraces(toProtobuf(batch)).spans]) {
        assert.deepStrictEqual(decodeSpanRecords(encodeSpanRecords(spans)), spans, `seed ${seed}`)
      }
    }
  })

  it('keeps attribute keys written with escapes, lone surrogates and int64 past 2^53', () => {
    const body = Buffer.from(
      JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'a"b' } }] },
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: '0af7651916cd43dd8448eb211c80319c',
                    spanId: 'b7ad6b7169203331',
                    name: 'escapes',
                    startTimeUnixNano: '1700000000000000000',
                    endTimeUnixNano: '1700000000000000001',
                    attributes: [
                      { key: 'a\\', value: { stringValue: 'backslash key' } },
                      { key: 'b\n', value: { stringValue: 'lone \ud800 surrogate' } },
                      { key: 'big', value: { intValue: '9007199254740993' } },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      }),
    )
    const spans = decodeTraceBody(body, 'json').spans
    const [span] = decodeSpanRecords(encodeSpanRecords(spans))
    assert.deepStrictEqual(span?.attributes, { 'a\\': { stringValue: 'backslash key' }, 'b\n': { stringValue: 'lone \ud800 surrogate' }, big: { intValue: '9007199254740993' } })
    assert.equal(span?.serviceName, 'a"b')
  })

  it('writes each resource once, and its spans share one attributes object again', () => {
    const spans = Array.from({ length: 20 }, (_, seed) => decodeProtobufTraces(toProtobuf(randomBatch(new Random(seed + 1)))).spans).flat()
    const resources = new Set(spans.map((span) => span.resourceAttributes))
    assert.ok(resources.size > 1 && spans.length > resources.size * 2, 'spans of several resources, sharing them')
    const encoded = JSON.parse(encodeSpanRecords(spans).toString()) as { resources: unknown[] }
    assert.equal(encoded.resources.length, resources.size)
    const decoded = decodeSpanRecords(encodeSpanRecords(spans))
    assert.equal(new Set(decoded.map((span) => span.resourceAttributes)).size, resources.size)
  })

  it('is smaller than the compact OTLP JSON it came from, for every LLM convention', () => {
    // What the queue's byte budget (QUEUE_MAX_BACKLOG_BYTES) and Redis hold: field names are not written per span.
    for (const { name, body } of llmBodies) {
      const compact = Buffer.byteLength(JSON.stringify(JSON.parse(body.toString())))
      const records = encodeSpanRecords(decodeTraceBody(body, 'json').spans).length
      assert.ok(records < compact, `${name}: ${records} B of records against ${compact} B of OTLP JSON`)
    }
  })

  it('reads a span without the fields appended to the layout since as null', () => {
    const [span] = decodeTraceBody(llmBodies[0]?.body ?? Buffer.from(''), 'json').spans
    assert.ok(span)
    const written = JSON.parse(encodeSpanRecords([span]).toString()) as { spans: unknown[][] }
    const older = { ...written, spans: written.spans.map((row) => row.slice(0, 13)) }
    const [decoded] = decodeSpanRecords(Buffer.from(JSON.stringify(older)))
    assert.equal(decoded?.spanId, span.spanId)
    assert.deepStrictEqual(decoded?.attributes, span.attributes)
    assert.equal(decoded?.llmModel, null)
    assert.equal(decoded?.userId, null)
  })

  it('refuses bytes that are not one', () => {
    const newer = `[${Array.from({ length: 40 }, () => 'null').join(',')}]`
    for (const bytes of [
      '{"resourceSpans":[]}',
      '{"resources":[],"spans":[{"spanId":"1","resourceAttributes":0}]}',
      '{"resources":[],"spans":[]}',
      '{"v":2,"resources":[],"spans":[["t","1",null,"n",0,"1","2","1",0,0]]}',
      '{"v":2,"resources":[{}],"spans":[["t","1"]]}',
      `{"v":2,"resources":[{}],"spans":[${newer}]}`,
      '{"v":3,"resources":[],"spans":[]}',
      'null',
    ]) {
      assert.throws(() => decodeSpanRecords(Buffer.from(bytes)), MalformedSpanRecordsError, bytes)
    }
    assert.throws(() => decodeSpanRecords(Buffer.from([0xff, 0xfe])), MalformedSpanRecordsError)
  })
})
