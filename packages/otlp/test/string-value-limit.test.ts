import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeJsonTraces, decodeProtobufTraces, MAX_STRING_VALUE_LENGTH, TRUNCATION_MARKER, type SpanRecord } from '../src/index.ts'
import { Random, randomBatch, toOtlpJson, toProtobuf, type ModelBatch } from './support/random-batch.ts'

/** A random batch whose first span carries `values` as string attributes a, b, … and one in an event. */
function batchWith(values: string[]): ModelBatch {
  // The first seed whose batch has a span: some random batches are empty.
  for (let seed = 1; ; seed++) {
    const batch = randomBatch(new Random(seed))
    const span = batch.resources.flatMap((resource) => resource.scopes.flatMap((scope) => scope.spans))[0]
    if (span) return withValues(batch, span, values)
  }
}

function withValues(batch: ModelBatch, span: ModelBatch['resources'][number]['scopes'][number]['spans'][number], values: string[]): ModelBatch {
  span.attributes = values.map((value, i) => ({ key: String.fromCharCode(97 + i), value: { kind: 'string', value } }))
  span.events = [{ time: span.start, name: 'prompt', attributes: [{ key: 'content', value: { kind: 'string', value: values[0] as string } }] }]
  return batch
}

const stringOf = (span: SpanRecord | undefined, key: string) => (span?.attributes[key] as { stringValue: string } | undefined)?.stringValue

describe('string values longer than the limit', () => {
  const long = 'x'.repeat(MAX_STRING_VALUE_LENGTH + 5_000)
  const exact = 'y'.repeat(MAX_STRING_VALUE_LENGTH)
  const batch = batchWith([long, exact, 'short'])

  for (const [encoding, decode] of [
    ['OTLP JSON', () => decodeJsonTraces(toOtlpJson(batch, 'list', 1)).spans],
    ['OTLP protobuf', () => decodeProtobufTraces(toProtobuf(batch)).spans],
  ] as const) {
    it(`are cut to the limit with a marker naming their length (${encoding}), in attributes and events`, () => {
      const [span] = decode()
      const cut = stringOf(span, 'a')
      assert.equal(cut?.length, MAX_STRING_VALUE_LENGTH)
      assert.ok(cut?.startsWith('xxxx'))
      assert.ok(cut?.endsWith(`${TRUNCATION_MARKER}${long.length}]`), cut?.slice(-80))
      assert.equal(stringOf(span, 'b'), exact, 'a value of exactly the limit is kept whole')
      assert.equal(stringOf(span, 'c'), 'short')
      assert.equal((span?.events[0]?.attributes.content as { stringValue: string }).stringValue, cut)
    })
  }

  it('are cut the same way in the Langtrace SDK format', () => {
    const [span] = decodeJsonTraces([
      {
        traceId: '7b1286681c494310c5e8b3459ea1508e',
        spanId: 'a40ebffecaf29be0',
        name: 'ts',
        kind: 0,
        startTime: [1795316906, 958000000],
        endTime: [1795316906, 958178765],
        attributes: { 'llm.prompts': long },
      },
    ]).spans
    const cut = stringOf(span, 'llm.prompts')
    assert.equal(cut?.length, MAX_STRING_VALUE_LENGTH)
    assert.ok(cut?.endsWith(`${TRUNCATION_MARKER}${long.length}]`))
  })
})
