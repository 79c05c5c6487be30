import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import protobuf from 'protobufjs'
import { decodeProtobufTraces, SpanKind, StatusCode } from '../src/index.ts'

// Protobuf bodies written tag by tag from the field numbers of opentelemetry-proto
// (collector/trace/v1, trace/v1, common/v1, resource/v1), independent of the decoder's own schema,
// for the fields the recorded fixtures do not exercise.

const LEN = 2
const VARINT = 0
const I64 = 1
const I32 = 5

type Field = [field: number, wire: number, value: Uint8Array | string | number | bigint | boolean]

function message(...fields: Field[]): Uint8Array {
  const w = protobuf.Writer.create()
  for (const [field, wire, value] of fields) {
    w.uint32((field << 3) | wire)
    if (wire === LEN) {
      if (typeof value === 'string') w.string(value)
      else w.bytes(value as Uint8Array)
    } else if (wire === VARINT) {
      if (typeof value === 'boolean') w.bool(value)
      else w.int64(String(value))
    } else if (wire === I64) {
      if (typeof value === 'number') w.double(value)
      else w.fixed64(String(value))
    } else {
      w.fixed32(value as number)
    }
  }
  return w.finish()
}

const hex = (s: string): Uint8Array => Buffer.from(s, 'hex')
const keyValue = (key: string, anyValue: Uint8Array): Uint8Array => message([1, LEN, key], [2, LEN, anyValue])
const attribute = (field: number, key: string, anyValue: Uint8Array): Field => [field, LEN, keyValue(key, anyValue)]

// AnyValue: string 1, bool 2, int 3, double 4, array 5, kvlist 6, bytes 7.
const anyString = (s: string): Uint8Array => message([1, LEN, s])
const anyInt = (n: bigint): Uint8Array => message([3, VARINT, n])

function span(...extra: Field[]): Uint8Array {
  return message(
    [1, LEN, hex('f9c70fe8575dedef4f7bf1c3c9d3b9a3')],
    [2, LEN, hex('dd4750b796992104')],
    [3, LEN, 'rojo=00f067aa0ba902b7'], // trace_state
    [4, LEN, hex('54981588596c6a79')], // parent_span_id
    [5, LEN, 'chat'],
    [6, VARINT, 3], // kind CLIENT
    [7, I64, 1795316906862000000n],
    [8, I64, 1795316906862127559n],
    [10, VARINT, 2], // dropped_attributes_count, ignored
    [16, I32, 257], // flags, ignored
    ...extra,
  )
}

function request(resourceSpans: Uint8Array): Uint8Array {
  return message([1, LEN, resourceSpans])
}

function resourceSpans(scopeField: number, spanBytes: Uint8Array): Uint8Array {
  const resource = message(attribute(1, 'service.name', anyString('wire-service')), [2, VARINT, 0])
  const scope = message([1, LEN, 'wire-scope'], [2, LEN, '3.1'], attribute(3, 'scope.attr', anyString('x')))
  return message([1, LEN, resource], [scopeField, LEN, message([1, LEN, scope], [2, LEN, spanBytes], [3, LEN, 'https://schema'])], [3, LEN, 'https://schema'])
}

describe('protobuf wire format', () => {
  it('reads trace state, status, events, links and every AnyValue kind', () => {
    const kvlist = message([1, LEN, keyValue('inner', message([2, VARINT, true]))])
    const array = message([1, LEN, anyString('a')], [1, LEN, anyInt(-5n)])
    const body = request(
      resourceSpans(
        2,
        span(
          attribute(9, 'neg', anyInt(-9223372036854775808n)),
          attribute(9, 'big', anyInt(9007199254740993n)),
          attribute(9, 'nan', message([4, I64, Number.NaN])),
          attribute(9, 'half', message([4, I64, 0.5])),
          attribute(9, 'bytes', message([7, LEN, hex('00ff10')])),
          attribute(9, 'list', message([5, LEN, array])),
          attribute(9, 'map', message([6, LEN, kvlist])),
          attribute(9, 'empty', new Uint8Array(0)),
          [11, LEN, message([1, I64, 1795316906862100000n], [2, LEN, 'first-token'], attribute(3, 'i', anyInt(1n)), [4, VARINT, 0])],
          [13, LEN, message([1, LEN, hex('0af7651916cd43dd8448eb211c80319c')], [2, LEN, hex('b7ad6b7169203331')], [3, LEN, 'k=v'], attribute(4, 'l', anyString('y')), [6, I32, 1])],
          [15, LEN, message([2, LEN, 'rate limited'], [3, VARINT, 2])],
        ),
      ),
    )
    const { spans } = decodeProtobufTraces(body)
    assert.equal(spans.length, 1)
    const [record] = spans
    assert.ok(record)
    assert.equal(record.traceId, 'f9c70fe8575dedef4f7bf1c3c9d3b9a3')
    assert.equal(record.parentSpanId, '54981588596c6a79')
    assert.equal(record.kind, SpanKind.CLIENT)
    assert.equal(record.traceState, 'rojo=00f067aa0ba902b7')
    assert.equal(record.statusCode, StatusCode.ERROR)
    assert.equal(record.statusMessage, 'rate limited')
    assert.equal(record.serviceName, 'wire-service')
    assert.equal(record.scopeName, 'wire-scope')
    assert.equal(record.scopeVersion, '3.1')
    assert.deepEqual(record.attributes, {
      neg: { intValue: '-9223372036854775808' },
      big: { intValue: '9007199254740993' },
      nan: { doubleValue: 'NaN' },
      half: { doubleValue: 0.5 },
      bytes: { bytesValue: 'AP8Q' },
      list: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: '-5' }] } },
      map: { kvlistValue: { values: [{ key: 'inner', value: { boolValue: true } }] } },
      empty: {},
    })
    assert.deepEqual(record.events, [{ timeUnixNano: '1795316906862100000', name: 'first-token', attributes: { i: { intValue: '1' } } }])
    assert.deepEqual(record.links, [
      { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceState: 'k=v', attributes: { l: { stringValue: 'y' } } },
    ])
  })

  it('keeps an explicitly empty string value and tolerates invalid UTF-8 as U+FFFD', () => {
    const invalid = message([1, LEN, Buffer.from([0x6f, 0x6b, 0xff, 0xfe])])
    const { spans } = decodeProtobufTraces(request(resourceSpans(2, span(attribute(9, 'empty', anyString('')), attribute(9, 'bad', invalid)))))
    assert.deepEqual(spans[0]?.attributes, { empty: { stringValue: '' }, bad: { stringValue: 'ok\uFFFD\uFFFD' } })
  })

  it('reads the deprecated instrumentation_library_spans (field 1000) when scope_spans is empty', () => {
    const { spans } = decodeProtobufTraces(request(resourceSpans(1000, span())))
    assert.equal(spans.length, 1)
    assert.equal(spans[0]?.scopeName, 'wire-scope')
  })

  it('rejects a kind or status code outside the enum', () => {
    assert.throws(() => decodeProtobufTraces(request(resourceSpans(2, span([6, VARINT, 9])))), {
      message: 'resourceSpans[0].scopeSpans[0].spans[0].kind: expected 0–5 or a SPAN_KIND_* name',
    })
    assert.throws(() => decodeProtobufTraces(request(resourceSpans(2, span([15, LEN, message([3, VARINT, -1])])))), {
      message: 'resourceSpans[0].scopeSpans[0].spans[0].status.code: expected 0–2 or a STATUS_CODE_* name',
    })
  })

  it('rejects a link id of the wrong length', () => {
    const link = message([1, LEN, hex('0af7651916cd43dd8448eb211c80319c')], [2, LEN, hex('b7ad6b71')])
    assert.throws(() => decodeProtobufTraces(request(resourceSpans(2, span([13, LEN, link])))), {
      message: 'resourceSpans[0].scopeSpans[0].spans[0].links[0].spanId: expected 8 bytes, got 4',
    })
  })

  it('accepts a plain Uint8Array view into a larger buffer', () => {
    const body = request(resourceSpans(2, span()))
    const padded = new Uint8Array(body.length + 10)
    padded.set(body, 5)
    assert.equal(decodeProtobufTraces(padded.subarray(5, 5 + body.length)).spans.length, 1)
  })
})
