import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeJsonTraces, SpanKind, StatusCode } from '../src/index.ts'
import type { SpanRecord } from '../src/index.ts'

// The Langtrace SDK array format beyond what the recorded fixtures show.

type Json = Record<string, unknown>

function ts(overrides: Json = {}): Json {
  return {
    traceId: '7b1286681c494310c5e8b3459ea1508e',
    spanId: 'a40ebffecaf29be0',
    name: 'ts',
    kind: 0,
    startTime: [1795316906, 958000000],
    endTime: [1795316906, 958178765],
    attributes: {},
    ...overrides,
  }
}

function py(overrides: Json = {}): Json {
  return {
    name: 'py',
    context: { trace_id: '0x4bf92f3577b34da6a3ce929d0e0e4736', span_id: '0x00f067aa0ba902b7', trace_state: '[]' },
    kind: 'SpanKind.INTERNAL',
    parent_id: null,
    start_time: '2024-11-20T21:25:30.275984Z',
    end_time: '2024-11-20T21:25:31.083383Z',
    status: { status_code: 'UNSET' },
    attributes: {},
    ...overrides,
  }
}

function one(span: Json): SpanRecord {
  const { format, spans } = decodeJsonTraces([span])
  assert.equal(format, 'langtrace-json')
  return spans[0] as SpanRecord
}

describe('span kinds', () => {
  it('shifts JS SDK numbers by one to OTLP', () => {
    const kinds = [0, 1, 2, 3, 4].map((kind) => one(ts({ kind })).kind)
    assert.deepEqual(kinds, [SpanKind.INTERNAL, SpanKind.SERVER, SpanKind.CLIENT, SpanKind.PRODUCER, SpanKind.CONSUMER])
    assert.equal(one(ts({ kind: '2' })).kind, SpanKind.CLIENT)
  })

  it('reads Python, bare and OTLP names', () => {
    assert.equal(one(py({ kind: 'SpanKind.CONSUMER' })).kind, SpanKind.CONSUMER)
    assert.equal(one(py({ kind: 'SERVER' })).kind, SpanKind.SERVER)
    assert.equal(one(py({ kind: 'SPAN_KIND_PRODUCER' })).kind, SpanKind.PRODUCER)
    assert.equal(one(py({ kind: undefined })).kind, SpanKind.UNSPECIFIED)
  })
})

describe('ids', () => {
  it('prefer top-level ids over context ids', () => {
    const span = one(py({ traceId: '11111111111111111111111111111111', spanId: '2222222222222222' }))
    assert.equal(span.traceId, '11111111111111111111111111111111')
    assert.equal(span.spanId, '2222222222222222')
  })

  it('accept context ids with or without 0x, in either case', () => {
    const span = one(py({ context: { trace_id: '4BF92F3577B34DA6A3CE929D0E0E4736', span_id: '0X00F067AA0BA902B7' } }))
    assert.equal(span.traceId, '4bf92f3577b34da6a3ce929d0e0e4736')
    assert.equal(span.spanId, '00f067aa0ba902b7')
  })

  it('read parents from parentSpanId, parentSpanContext (OTel JS 2.x) or parent_id', () => {
    assert.equal(one(ts({ parentSpanId: 'a057b7d7ef547db3' })).parentSpanId, 'a057b7d7ef547db3')
    assert.equal(one(ts({ parentSpanContext: { traceId: 'x', spanId: 'a057b7d7ef547db3' } })).parentSpanId, 'a057b7d7ef547db3')
    assert.equal(one(py({ parent_id: '0x53995c3f42cd8ad8' })).parentSpanId, '53995c3f42cd8ad8')
    assert.equal(one(ts({ parentSpanId: '' })).parentSpanId, null)
  })
})

describe('times', () => {
  it('read HrTime exactly', () => {
    const span = one(ts({ startTime: [0, 1], endTime: [9223372036, 854775807] }))
    assert.equal(span.startTimeUnixNano, '1')
    assert.equal(span.endTimeUnixNano, '9223372036854775807')
  })

  it('read ISO times with 1–9 fraction digits and offsets, exactly', () => {
    const at = (start_time: string): string => one(py({ start_time, end_time: '2100-01-01T00:00:00Z' })).startTimeUnixNano
    assert.equal(at('2024-11-20T21:25:30.275984Z'), '1732137930275984000')
    assert.equal(at('2024-11-20T21:25:30.123456789Z'), '1732137930123456789')
    assert.equal(at('2024-11-20T21:25:30.1Z'), '1732137930100000000')
    assert.equal(at('2024-11-20T21:25:30Z'), '1732137930000000000')
    assert.equal(at('2024-11-20T23:25:30.5+02:00'), '1732137930500000000')
    assert.equal(at('2024-11-20T16:25:30.5-0500'), '1732137930500000000')
    assert.equal(at('2024-11-20 21:25:30.999999999'), '1732137930999999999')
    assert.equal(at('2024-02-29T00:00:00Z'), '1709164800000000000')
  })

  it('accept OTLP nanosecond fields too', () => {
    const span = one(ts({ startTime: undefined, endTime: undefined, startTimeUnixNano: '5', endTimeUnixNano: 7 }))
    assert.equal(span.durationNs, '2')
  })
})

describe('attributes', () => {
  it('type plain values and skip nulls', () => {
    const span = one(
      ts({
        attributes: {
          s: 'x',
          i: 3,
          big: 2 ** 60,
          d: 0.5,
          b: true,
          arr: ['a', 1, null, [false]],
          obj: { k: 'v', gone: null, n: { deeper: 1.25 } },
          nothing: null,
        },
      }),
    )
    assert.deepEqual(span.attributes, {
      s: { stringValue: 'x' },
      i: { intValue: '3' },
      big: { intValue: '1152921504606846976' },
      d: { doubleValue: 0.5 },
      b: { boolValue: true },
      arr: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: '1' }, {}, { arrayValue: { values: [{ boolValue: false }] } }] } },
      obj: {
        kvlistValue: {
          values: [
            { key: 'k', value: { stringValue: 'v' } },
            { key: 'n', value: { kvlistValue: { values: [{ key: 'deeper', value: { doubleValue: 1.25 } }] } } },
          ],
        },
      },
    })
  })

  it('bound nesting depth', () => {
    let deep: unknown = 'leaf'
    for (let i = 0; i < 100_000; i++) deep = [deep]
    assert.throws(() => one(ts({ attributes: { deep } })), {
      name: 'SpanValidationError',
      message: /^\[0\]\.attributes\["deep"\](\[0\]){32}: nested deeper than 32 levels$/,
    })
  })

  it('read resource attributes from attributes, _attributes or _syncAttributes', () => {
    assert.equal(one(ts({ resource: { attributes: { 'service.name': 'a' } } })).serviceName, 'a')
    assert.equal(one(ts({ resource: { _attributes: { 'service.name': 'b' }, _syncAttributes: { 'service.name': 'c' } } })).serviceName, 'b')
    assert.equal(one(ts({ resource: { _syncAttributes: { 'service.name': 'c' } } })).serviceName, 'c')
  })

  it('read the scope from instrumentationScope or instrumentationLibrary', () => {
    const span = one(ts({ instrumentationScope: { name: 'scope', version: '2.0' }, instrumentationLibrary: { name: 'lib' } }))
    assert.equal(span.scopeName, 'scope')
    assert.equal(span.scopeVersion, '2.0')
  })
})

describe('status, events and links', () => {
  it('read JS and Python status', () => {
    const js = one(ts({ status: { code: 2, message: 'boom' } }))
    assert.equal(js.statusCode, StatusCode.ERROR)
    assert.equal(js.statusMessage, 'boom')
    const python = one(py({ status: { status_code: 'ERROR', description: 'bad' } }))
    assert.equal(python.statusCode, StatusCode.ERROR)
    assert.equal(python.statusMessage, 'bad')
    assert.equal(one(py({ status: { status_code: 'OK' } })).statusCode, StatusCode.OK)
  })

  it('read JS events and links', () => {
    const span = one(
      ts({
        events: [{ name: 'e', time: [1795316906, 958100000], attributes: { n: 1 } }],
        links: [{ context: { traceId: '7b1286681c494310c5e8b3459ea1508e', spanId: 'a057b7d7ef547db3', traceFlags: 1 }, attributes: {} }],
      }),
    )
    assert.deepEqual(span.events, [{ timeUnixNano: '1795316906958100000', name: 'e', attributes: { n: { intValue: '1' } } }])
    assert.deepEqual(span.links, [{ traceId: '7b1286681c494310c5e8b3459ea1508e', spanId: 'a057b7d7ef547db3', traceState: null, attributes: {} }])
  })

  it('read Python events, links and trace state reprs', () => {
    const span = one(
      py({
        context: { trace_id: '0x4bf92f3577b34da6a3ce929d0e0e4736', span_id: '0x00f067aa0ba902b7', trace_state: "['{key=vendor, value=abc}', '{key=other, value=1}']" },
        events: [{ name: 'e', timestamp: '2024-11-20T21:25:30.300000Z', attributes: {} }],
        links: [{ context: { trace_id: '0x4bf92f3577b34da6a3ce929d0e0e4736', span_id: '0x53995c3f42cd8ad8', trace_state: '[]' }, attributes: { a: 'b' } }],
      }),
    )
    assert.equal(span.traceState, 'vendor=abc,other=1')
    assert.equal(span.events[0]?.timeUnixNano, '1732137930300000000')
    assert.deepEqual(span.links, [
      { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '53995c3f42cd8ad8', traceState: null, attributes: { a: { stringValue: 'b' } } },
    ])
  })
})

it('decodes an empty array as zero spans', () => {
  assert.deepEqual(decodeJsonTraces([]), { format: 'langtrace-json', spans: [], rejected: 0, problems: [] })
})
