import assert from 'node:assert/strict'
import { it } from 'node:test'
import { decodeJsonTraces, decodeProtobufTraces } from '../src/index.ts'
import { hex, Random, randomBatch, toOtlpJson, toProtobuf } from './support/random-batch.ts'

// Property: one batch, three encodings (OTLP JSON with list attributes, with map attributes, and
// protobuf), one result. Seeded, so a failure names the batch that reproduces it.
const BATCHES = 400

it(`decodes ${BATCHES} random batches identically from list-form JSON, map-form JSON and protobuf`, () => {
  let spanCount = 0
  for (let seed = 1; seed <= BATCHES; seed++) {
    const batch = randomBatch(new Random(seed))
    const fromList = decodeJsonTraces(toOtlpJson(batch, 'list', seed)).spans
    const fromMap = decodeJsonTraces(toOtlpJson(batch, 'map', seed + 1_000_000)).spans
    const fromProtobuf = decodeProtobufTraces(toProtobuf(batch)).spans
    assert.deepStrictEqual(fromMap, fromList, `seed ${seed}: map form differs from list form`)
    assert.deepStrictEqual(fromProtobuf, fromList, `seed ${seed}: protobuf differs from JSON`)

    // And the result is the model, not just three decoders agreeing.
    const modelSpans = batch.resources.flatMap((r) => r.scopes.flatMap((s) => s.spans))
    assert.equal(fromList.length, modelSpans.length, `seed ${seed}`)
    modelSpans.forEach((model, i) => {
      const span = fromList[i]
      assert.ok(span)
      assert.equal(span.traceId, hex(model.traceId))
      assert.equal(span.spanId, hex(model.spanId))
      assert.equal(span.parentSpanId, model.parentSpanId === null ? null : hex(model.parentSpanId))
      assert.equal(span.kind, model.kind)
      assert.equal(span.startTimeUnixNano, model.start.toString())
      assert.equal(span.durationNs, (model.end - model.start).toString())
      assert.equal(span.statusCode, model.status?.code ?? 0)
      assert.equal(Object.keys(span.attributes).length, model.attributes.length)
      assert.equal(span.events.length, model.events.length)
      assert.equal(span.links[0]?.traceId ?? null, model.links[0] ? hex(model.links[0].traceId) : null)
    })
    spanCount += modelSpans.length
  }
  assert.ok(spanCount > 1000, `only ${spanCount} spans generated`)
})
