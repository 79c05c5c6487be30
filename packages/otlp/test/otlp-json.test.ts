import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeJsonTraces, decodeTraceBody, ImpreciseIntegerError, SpanKind, StatusCode } from '../src/index.ts'
import type { SpanRecord } from '../src/index.ts'

// What OTLP JSON bodies are accepted and how they are normalised.

type Json = Record<string, unknown>

const TRACE_ID = '995de3342686b2287bcc0988c6bd2737'
const SPAN_ID = 'a1cc6c3931297cac'

function span(overrides: Json = {}): Json {
  return {
    traceId: TRACE_ID,
    spanId: SPAN_ID,
    name: 'op',
    startTimeUnixNano: '1000',
    endTimeUnixNano: '2000',
    ...overrides,
  }
}

function decodeOne(spanJson: Json, resource: Json = {}): SpanRecord {
  const { spans } = decodeJsonTraces({ resourceSpans: [{ resource, scopeSpans: [{ spans: [spanJson] }] }] })
  assert.equal(spans.length, 1)
  return spans[0] as SpanRecord
}

describe('ids', () => {
  it('lowercases hex in either case', () => {
    const record = decodeOne(span({ traceId: TRACE_ID.toUpperCase(), spanId: 'A1cc6C3931297CAC' }))
    assert.equal(record.traceId, TRACE_ID)
    assert.equal(record.spanId, SPAN_ID)
  })

  it('accepts base64 ids of exactly 16/8 bytes (protobuf JSON mapping) as hex', () => {
    const traceB64 = Buffer.from(TRACE_ID, 'hex').toString('base64')
    const spanB64 = Buffer.from(SPAN_ID, 'hex').toString('base64url').replace(/=+$/, '')
    const record = decodeOne(span({ traceId: traceB64, spanId: spanB64, parentSpanId: Buffer.from('0102030405060708', 'hex').toString('base64') }))
    assert.equal(record.traceId, TRACE_ID)
    assert.equal(record.spanId, SPAN_ID)
    assert.equal(record.parentSpanId, '0102030405060708')
  })

  it('reads an absent, empty or all-zero parent as a root', () => {
    assert.equal(decodeOne(span()).parentSpanId, null)
    assert.equal(decodeOne(span({ parentSpanId: '' })).parentSpanId, null)
    assert.equal(decodeOne(span({ parentSpanId: null })).parentSpanId, null)
    assert.equal(decodeOne(span({ parentSpanId: '0000000000000000' })).parentSpanId, null)
  })
})

describe('span fields', () => {
  it('allows an empty name and defaults kind and status', () => {
    const record = decodeOne(span({ name: '' }))
    assert.equal(record.name, '')
    assert.equal(record.kind, SpanKind.UNSPECIFIED)
    assert.equal(record.statusCode, StatusCode.UNSET)
    assert.equal(record.statusMessage, null)
    assert.equal(record.traceState, null)
  })

  it('accepts kinds and status codes as numbers or enum names', () => {
    assert.equal(decodeOne(span({ kind: 'SPAN_KIND_CONSUMER' })).kind, SpanKind.CONSUMER)
    assert.equal(decodeOne(span({ kind: 2 })).kind, SpanKind.SERVER)
    const failed = decodeOne(span({ status: { code: 'STATUS_CODE_ERROR', message: 'boom' } }))
    assert.equal(failed.statusCode, StatusCode.ERROR)
    assert.equal(failed.statusMessage, 'boom')
    assert.equal(decodeOne(span({ status: { code: 1 } })).statusCode, StatusCode.OK)
  })

  it('accepts times as integer numbers and normalises leading zeros', () => {
    const record = decodeOne(span({ startTimeUnixNano: 1500, endTimeUnixNano: '0002000' }))
    assert.equal(record.startTimeUnixNano, '1500')
    assert.equal(record.endTimeUnixNano, '2000')
    assert.equal(record.durationNs, '500')
  })

  it('allows end == start', () => {
    assert.equal(decodeOne(span({ endTimeUnixNano: '1000' })).durationNs, '0')
  })

  // Times are compared and subtracted as seconds and nanoseconds in doubles, BigInt only for
  // durations past 2^53 ns: these straddle each boundary of that split.
  it('reads times exactly as BigInt arithmetic would, across the int64 bound and the 2^53 ns duration bound', () => {
    const INT64_MAX = 2n ** 63n - 1n
    const cases: Array<[bigint, bigint]> = [
      [0n, INT64_MAX],
      [INT64_MAX - 1n, INT64_MAX],
      [999_999_999n, 1_000_000_000n],
      [1_795_316_906_999_999_999n, 1_795_316_907_000_000_000n],
      [1_795_316_906_000_000_000n, 1_795_316_906_000_000_000n + 2n ** 53n - 1n],
      [1_795_316_906_000_000_000n, 1_795_316_906_000_000_000n + 2n ** 53n],
      [1_795_316_906_000_000_001n, 1_795_316_906_000_000_000n + 9_007_198_000_000_000n],
      [1_795_316_906_999_999_999n, 1_795_316_906_000_000_000n + 9_007_198_000_000_000n],
      [1n, 9_007_199_000_000_000n],
    ]
    for (const [start, end] of cases) {
      const record = decodeOne(span({ startTimeUnixNano: start.toString(), endTimeUnixNano: `000${end}` }))
      assert.deepEqual(
        [record.startTimeUnixNano, record.endTimeUnixNano, record.durationNs],
        [start.toString(), end.toString(), (end - start).toString()],
        `${start} → ${end}`,
      )
    }
  })

  it('rejects an end one nanosecond before a start in the same second, and times past int64 however padded', () => {
    assert.throws(
      () => decodeOne(span({ startTimeUnixNano: '1795316906000000001', endTimeUnixNano: '1795316906000000000' })),
      /endTimeUnixNano: must not be before startTimeUnixNano/,
    )
    assert.throws(() => decodeOne(span({ endTimeUnixNano: '00000000009223372036854775808' })), /endTimeUnixNano: exceeds the int64 maximum/)
    assert.throws(() => decodeOne(span({ endTimeUnixNano: '9223372037000000000' })), /endTimeUnixNano: exceeds the int64 maximum/)
    assert.equal(decodeOne(span({ startTimeUnixNano: '0', endTimeUnixNano: '000000000000000000000000000000' })).endTimeUnixNano, '0')
  })

  it('keeps event times as canonical decimals', () => {
    const record = decodeOne(span({ events: [{ timeUnixNano: '0001500' }, { timeUnixNano: 1600 }] }))
    assert.deepEqual(record.events.map((e) => e.timeUnixNano), ['1500', '1600'])
  })

  it('keeps events and links, ignoring fields it does not store', () => {
    const record = decodeOne(
      span({
        flags: 257,
        droppedAttributesCount: 3,
        traceState: 'a=b',
        events: [{ timeUnixNano: '1500', name: 'e', attributes: [{ key: 'x', value: { boolValue: true } }], droppedAttributesCount: 0 }],
        links: [{ traceId: TRACE_ID, spanId: '0102030405060708', traceState: 'k=v', attributes: { y: { intValue: '-3' } }, flags: 1 }],
      }),
    )
    assert.equal(record.traceState, 'a=b')
    assert.deepEqual(record.events, [{ timeUnixNano: '1500', name: 'e', attributes: { x: { boolValue: true } } }])
    assert.deepEqual(record.links, [
      { traceId: TRACE_ID, spanId: '0102030405060708', traceState: 'k=v', attributes: { y: { intValue: '-3' } } },
    ])
  })
})

describe('AnyValue normalisation', () => {
  function attribute(value: unknown): unknown {
    return decodeOne(span({ attributes: [{ key: 'k', value }] })).attributes.k
  }

  it('turns intValue strings and numbers into canonical decimal strings', () => {
    assert.deepEqual(attribute({ intValue: 42 }), { intValue: '42' })
    assert.deepEqual(attribute({ intValue: '0042' }), { intValue: '42' })
    assert.deepEqual(attribute({ intValue: '-0' }), { intValue: '0' })
    assert.deepEqual(attribute({ intValue: '9223372036854775807' }), { intValue: '9223372036854775807' })
    assert.deepEqual(attribute({ intValue: '-9223372036854775808' }), { intValue: '-9223372036854775808' })
  })

  it('keeps an intValue given as a JSON number past 2^53 exact, however the body writes it', () => {
    const body = (intValue: string) =>
      Buffer.from(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${TRACE_ID}","spanId":"${SPAN_ID}","name":"op","startTimeUnixNano":1795316906845000123,"endTimeUnixNano":"1795316906845000124","attributes":[{"key":"n","value":{"intValue":${intValue}}}]}]}]}]}`)
    for (const digits of ['9007199254740993', '-9007199254740993', '9223372036854775807', '1152921504606846976']) {
      const [record] = decodeTraceBody(body(digits), 'json').spans
      assert.deepEqual(record?.attributes.n, { intValue: digits })
      assert.equal(record?.startTimeUnixNano, '1795316906845000123', 'a time given as a number is exact too')
    }
    // Parsed already, the digits are gone: the decoder says so rather than store a rounded value.
    assert.throws(() => decodeJsonTraces({ resourceSpans: [{ scopeSpans: [{ spans: [span({ attributes: [{ key: 'n', value: { intValue: 2 ** 60 } }] })] }] }] }), ImpreciseIntegerError)
  })

  it('keeps the non-finite doubles as their JSON-mapping strings', () => {
    assert.deepEqual(attribute({ doubleValue: 'NaN' }), { doubleValue: 'NaN' })
    assert.deepEqual(attribute({ doubleValue: '-Infinity' }), { doubleValue: '-Infinity' })
    assert.deepEqual(attribute({ doubleValue: 1.5 }), { doubleValue: 1.5 })
  })

  it('canonicalises bytesValue base64', () => {
    assert.deepEqual(attribute({ bytesValue: '-_8' }), { bytesValue: '+/8=' })
    assert.deepEqual(attribute({ bytesValue: '' }), { bytesValue: '' })
  })

  it('keeps nested arrays, kvlists and empty values', () => {
    const value = { kvlistValue: { values: [{ key: 'a', value: { arrayValue: { values: [{}, { boolValue: false }] } } }, { key: 'b' }] } }
    assert.deepEqual(attribute(value), {
      kvlistValue: { values: [{ key: 'a', value: { arrayValue: { values: [{}, { boolValue: false }] } } }, { key: 'b', value: {} }] },
    })
    assert.deepEqual(attribute({ arrayValue: {} }), { arrayValue: { values: [] } })
    assert.deepEqual(attribute(undefined), {})
  })

  it('stores the key __proto__ as an ordinary attribute', () => {
    const record = decodeOne(span({ attributes: JSON.parse('{"__proto__": {"stringValue": "x"}, "a": {"stringValue": "y"}}') }))
    assert.equal(Object.getPrototypeOf(record.attributes), Object.prototype)
    assert.deepEqual(Object.keys(record.attributes), ['__proto__', 'a'])
    assert.equal(JSON.stringify(record.attributes), '{"__proto__":{"stringValue":"x"},"a":{"stringValue":"y"}}')
  })

  it('lets the last of duplicate list keys win', () => {
    const record = decodeOne(span({ attributes: [{ key: 'k', value: { intValue: 1 } }, { key: 'k', value: { intValue: 2 } }] }))
    assert.deepEqual(record.attributes, { k: { intValue: '2' } })
  })

  // List-form names go through a table of recently used names (attribute-map.ts), shared by every
  // resource, scope and span: names that meet in one slot of it must still come out as sent.
  it('keeps names as sent when different names take turns at the same place in their lists', () => {
    // Same position, length, middle and last character: the same slot of the table.
    const names = ['alpha.model', 'omega.model', 'a\\"\u0000.model', '__proto__', 'alpha.model']
    const resourceSpans = names.map((name, r) => ({
      resource: { attributes: [{ key: 'service.name', value: { stringValue: `service-${r}` } }, { key: name, value: { intValue: r } }] },
      scopeSpans: ['s1', 's2'].map((scope) => ({
        scope: { name: scope },
        spans: [span({ attributes: [{ key: 'first', value: { boolValue: true } }, { key: name, value: { stringValue: `${r}-${scope}` } }] })],
      })),
    }))
    const { spans } = decodeJsonTraces(JSON.parse(JSON.stringify({ resourceSpans })))
    assert.equal(spans.length, names.length * 2)
    spans.forEach((record, i) => {
      const r = Math.floor(i / 2)
      const name = names[r] as string
      assert.deepEqual(Object.keys(record.resourceAttributes), ['service.name', name])
      assert.deepEqual(Object.keys(record.attributes), ['first', name])
      assert.deepEqual(Object.getOwnPropertyDescriptor(record.attributes, name)?.value, { stringValue: `${r}-${record.scopeName}` })
      assert.equal(Object.getPrototypeOf(record.attributes), Object.prototype)
    })
  })
})

describe('structure', () => {
  it('reads every resourceSpans and scopeSpans, each span with its own resource and scope', () => {
    const { spans } = decodeJsonTraces({
      resourceSpans: [
        {
          resource: { attributes: { 'service.name': { stringValue: 'a' } } },
          scopeSpans: [
            { scope: { name: 's1', version: '1' }, spans: [span({ name: '1' }), span({ name: '2' })] },
            { scope: { name: 's2' }, spans: [span({ name: '3' })] },
          ],
        },
        { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'b' } }] }, scopeSpans: [{ spans: [span({ name: '4' })] }] },
        { scopeSpans: [] },
        {},
      ],
    })
    assert.deepEqual(
      spans.map((s) => [s.name, s.serviceName, s.scopeName, s.scopeVersion]),
      [
        ['1', 'a', 's1', '1'],
        ['2', 'a', 's1', '1'],
        ['3', 'a', 's2', null],
        ['4', 'b', null, null],
      ],
    )
  })

  it('reads the pre-1.0 instrumentationLibrarySpans when scopeSpans is absent', () => {
    const { spans } = decodeJsonTraces({
      resourceSpans: [{ instrumentationLibrarySpans: [{ instrumentationLibrary: { name: 'old', version: '0.9' }, spans: [span()] }] }],
    })
    assert.equal(spans.length, 1)
    assert.equal(spans[0]?.scopeName, 'old')
    assert.equal(spans[0]?.scopeVersion, '0.9')
  })

  it('ignores instrumentationLibrarySpans double-published next to scopeSpans', () => {
    const { spans } = decodeJsonTraces({
      resourceSpans: [
        {
          scopeSpans: [{ scope: { name: 'new' }, spans: [span()] }],
          instrumentationLibrarySpans: [{ instrumentationLibrary: { name: 'old' }, spans: [span()] }],
        },
      ],
    })
    assert.deepEqual(spans.map((s) => s.scopeName), ['new'])
  })

  it('shares one resource attributes object between the spans of a resource', () => {
    const { spans } = decodeJsonTraces({ resourceSpans: [{ resource: { attributes: {} }, scopeSpans: [{ spans: [span(), span()] }] }] })
    assert.equal(spans[0]?.resourceAttributes, spans[1]?.resourceAttributes)
  })
})
