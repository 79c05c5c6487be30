import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { JsonTextBytes } from '@tracewell/json-text'
import { decodeJsonTraces, decodeProtobufTraces, decodeSpanRecords, decodeSpanRecordsToStore, decodeTraceBody, encodeSpanRecords, MalformedSpanRecordsError, type SpanRecord } from '../src/index.ts'
import { Random, randomBatch, toOtlpJson, toProtobuf } from './support/random-batch.ts'

// The queue carries what ingest decoded as a 'records' body; the writer stores what it parses
// back. Anything the round trip changed would be stored differently from what ingest counted.

const conventions = new URL('../../../test-fixtures/llm-conventions/', import.meta.url)
const llmBodies = readdirSync(conventions).filter((name) => name.endsWith('.json')).map((name) => ({ name, body: readFileSync(new URL(name, conventions)) }))

/** A records body's JSON part (resources and spans) and the texts after it. */
function split(body: Buffer): { head: { v: number; resources: unknown[]; spans: unknown[][] }; texts: Buffer } {
  const newline = body.indexOf(0x0a)
  return { head: JSON.parse(body.subarray(0, newline).toString()), texts: body.subarray(newline + 1) }
}

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
    assert.equal(split(encodeSpanRecords(spans)).head.resources.length, resources.size)
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
    const { head, texts } = split(encodeSpanRecords([span]))
    const older = { ...head, spans: head.spans.map((row) => row.slice(0, 13)) }
    const [decoded] = decodeSpanRecords(Buffer.concat([Buffer.from(`${JSON.stringify(older)}\n`), texts]))
    assert.equal(decoded?.spanId, span.spanId)
    assert.deepStrictEqual(decoded?.attributes, span.attributes)
    assert.equal(decoded?.llmModel, null)
    assert.equal(decoded?.userId, null)
  })

  it('keeps each span\'s attributes and events as the bytes of their JSON text, for the writer to store as they are', () => {
    const random = Array.from({ length: 30 }, (_, seed) => decodeJsonTraces(toOtlpJson(randomBatch(new Random(seed + 1)), 'map', seed)).spans)
    const spans = [...llmBodies.flatMap(({ body }) => decodeTraceBody(body, 'json').spans), ...random.flat()]
    assert.ok(spans.some((span) => span.events.length > 0), 'a span with events')
    const toStore = decodeSpanRecordsToStore(encodeSpanRecords(spans))
    assert.equal(toStore.length, spans.length)
    for (const [at, record] of toStore.entries()) {
      const span = spans[at] as SpanRecord
      assert.ok(record.attributes instanceof JsonTextBytes && record.events instanceof JsonTextBytes, `span ${at}: texts`)
      assert.equal(record.attributes.text(), JSON.stringify(span.attributes))
      assert.equal(record.events.text(), JSON.stringify(span.events))
      assert.deepStrictEqual({ ...record, attributes: span.attributes, events: span.events }, span)
    }
  })

  it('keeps attributes naming a trace\'s prompt or tags in the JSON, for the writer to read them', () => {
    const [span] = decodeTraceBody(llmBodies[0]?.body ?? Buffer.from(''), 'json').spans
    assert.ok(span)
    const labels: Array<SpanRecord['attributes']> = [
      { 'tracewell.prompt.promptset_id': { stringValue: 'ps-1' }, 'tracewell.prompt.version': { intValue: '3' } },
      { 'langfuse.observation.prompt.name': { stringValue: 'support' } },
      { 'langfuse.trace.tags': { arrayValue: { values: [{ stringValue: 'beta' }] } } },
      { 'tag.tags': { stringValue: 'solo' } },
    ]
    const labelled = labels.map((attributes): SpanRecord => ({ ...span, attributes: { ...span.attributes, ...attributes } }))
    const spans: SpanRecord[] = [span, ...labelled, span]
    const toStore = decodeSpanRecordsToStore(encodeSpanRecords(spans))
    assert.deepStrictEqual(toStore.map((record) => record.attributes instanceof JsonTextBytes), [true, false, false, false, false, true])
    assert.deepStrictEqual(toStore.slice(1, 5).map((record) => record.attributes), labelled.map((labelledSpan) => labelledSpan.attributes))
    assert.deepStrictEqual(decodeSpanRecords(encodeSpanRecords(spans)), spans)
  })

  it('gives back texts larger than the area they are written in first, and small ones after them', () => {
    const [span] = decodeTraceBody(llmBodies[0]?.body ?? Buffer.from(''), 'json').spans
    assert.ok(span)
    const large = { ...span, attributes: { ...span.attributes, big: { stringValue: 'é😀"\\'.repeat(40_000) } } }
    for (const spans of [[span, large, span], [span]]) assert.deepStrictEqual(decodeSpanRecords(encodeSpanRecords(spans)), spans)
  })

  it('reads a body of layout 2, every value inside its JSON, as queued before an upgrade', () => {
    const spans = decodeTraceBody(llmBodies[0]?.body ?? Buffer.from(''), 'json').spans
    const { head } = split(encodeSpanRecords(spans))
    const layout2 = { ...head, v: 2, spans: head.spans.map((row, at) => Object.assign([...row], { 10: spans[at]?.attributes, 11: spans[at]?.events })) }
    const body = Buffer.from(JSON.stringify(layout2))
    assert.deepStrictEqual(decodeSpanRecords(body), spans)
    assert.deepStrictEqual(decodeSpanRecordsToStore(body), spans)
  })

  it('refuses texts that do not add up to the body', () => {
    const body = encodeSpanRecords(decodeTraceBody(llmBodies[0]?.body ?? Buffer.from(''), 'json').spans)
    for (const bytes of [body.subarray(0, body.length - 1), Buffer.concat([body, Buffer.from('{}')]), body.subarray(0, body.indexOf(0x0a))]) {
      assert.throws(() => decodeSpanRecordsToStore(bytes), MalformedSpanRecordsError)
    }
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
      '{"v":4,"resources":[],"spans":[]}',
      '{"v":3,"resources":[{}],"spans":[["t","1",null,"n",0,"1","2","1",0,0,9]]}\n{}',
      'null',
    ]) {
      assert.throws(() => decodeSpanRecords(Buffer.from(bytes)), MalformedSpanRecordsError, bytes)
    }
    assert.throws(() => decodeSpanRecords(Buffer.from([0xff, 0xfe])), MalformedSpanRecordsError)
  })
})
