import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import protobuf from 'protobufjs'
import { decodeJsonTraces, decodeProtobufTraces, SpanValidationError, type DecodedTraces } from '../src/index.ts'
import { fixtureBytes } from './support/fixtures.ts'

// Bad input is refused with a SpanValidationError whose message starts with the exact path: the
// body, when it is not a batch or has no valid span; the span alone, when others are valid.

type Json = Record<string, unknown>

function span(overrides: Json = {}): Json {
  return {
    traceId: '995de3342686b2287bcc0988c6bd2737',
    spanId: 'a1cc6c3931297cac',
    name: 'openai.chat',
    kind: 3,
    startTimeUnixNano: '1795316906845000000',
    endTimeUnixNano: '1795316906845338304',
    attributes: [{ key: 'llm.vendor', value: { stringValue: 'openai' } }],
    ...overrides,
  }
}

/** A body whose bad span sits at resourceSpans[0].scopeSpans[1].spans[2]. */
function body(bad: Json): Json {
  return {
    resourceSpans: [
      {
        resource: { attributes: [] },
        scopeSpans: [{ spans: [span()] }, { scope: { name: 's' }, spans: [span(), span(), bad] }],
      },
    ],
  }
}

const AT = 'resourceSpans[0].scopeSpans[1].spans[2]'

/**
 * `message` is the problem `input` is refused for: a body that is not a batch, or whose spans are
 * all invalid, throws it; one invalid span among valid ones is rejected alone and named in the
 * partial success (the others are kept).
 */
function rejects(input: unknown, message: string, path?: string): void {
  let decoded: DecodedTraces
  try {
    decoded = decodeJsonTraces(input)
  } catch (error) {
    assert.ok(error instanceof SpanValidationError, `not a SpanValidationError: ${String(error)}`)
    assert.equal(error.message, message)
    assert.equal(error.path, path ?? message.slice(0, message.indexOf(': ')))
    assert.equal(error.statusCode, 400)
    return
  }
  assert.deepEqual({ rejected: decoded.rejected, problems: decoded.problems }, { rejected: 1, problems: [message] })
  assert.ok(decoded.spans.length > 0)
}

function rejectsProtobuf(input: Uint8Array, message: string | RegExp): void {
  let decoded: DecodedTraces
  try {
    decoded = decodeProtobufTraces(input)
  } catch (error) {
    assert.ok(error instanceof SpanValidationError, `not a SpanValidationError: ${String(error)}`)
    if (typeof message === 'string') assert.equal(error.message, message)
    else assert.match(error.message, message)
    return
  }
  assert.equal(decoded.rejected, 1)
  if (typeof message === 'string') assert.deepEqual(decoded.problems, [message])
  else assert.match(decoded.problems[0] ?? '', message)
}

describe('OTLP JSON ids', () => {
  it('rejects a trace id of the wrong length', () => {
    rejects(body(span({ traceId: '995de3342686b2287bcc0988c6bd27' })), `${AT}.traceId: expected 32 hex characters`)
  })

  it('rejects a span id with a non-hex character', () => {
    rejects(body(span({ spanId: 'a1cc6c3931297caz' })), `${AT}.spanId: expected 16 hex characters`)
  })

  it('rejects all-zero ids', () => {
    rejects(body(span({ traceId: '0'.repeat(32) })), `${AT}.traceId: must not be all zeros`)
    rejects(body(span({ spanId: '0'.repeat(16) })), `${AT}.spanId: must not be all zeros`)
  })

  it('rejects a missing or non-string id', () => {
    rejects(body(span({ spanId: undefined })), `${AT}.spanId: required`)
    rejects(body(span({ traceId: 12 })), `${AT}.traceId: expected 32 hex characters`)
  })

  it('rejects base64 of the wrong number of bytes', () => {
    rejects(body(span({ spanId: Buffer.alloc(9, 1).toString('base64') })), `${AT}.spanId: expected 16 hex characters`)
  })

  it('rejects a bad parent and link id', () => {
    rejects(body(span({ parentSpanId: 'xyz' })), `${AT}.parentSpanId: expected 16 hex characters`)
    rejects(
      body(span({ links: [{ traceId: '995de3342686b2287bcc0988c6bd2737', spanId: '00' }] })),
      `${AT}.links[0].spanId: expected 16 hex characters`,
    )
  })
})

describe('OTLP JSON times', () => {
  it('rejects an end before the start', () => {
    rejects(
      body(span({ endTimeUnixNano: '1795316906844999999' })),
      `${AT}.endTimeUnixNano: must not be before startTimeUnixNano`,
    )
  })

  it('compares times exactly beyond 2^53', () => {
    // These differ only in the last digit, which a float comparison would lose.
    rejects(
      body(span({ startTimeUnixNano: '1795316906845000001', endTimeUnixNano: '1795316906845000000' })),
      `${AT}.endTimeUnixNano: must not be before startTimeUnixNano`,
    )
  })

  it('rejects missing, negative, fractional and malformed times', () => {
    rejects(body(span({ startTimeUnixNano: undefined })), `${AT}.startTimeUnixNano: required`)
    rejects(body(span({ startTimeUnixNano: -1 })), `${AT}.startTimeUnixNano: expected a non-negative integer of nanoseconds`)
    rejects(body(span({ startTimeUnixNano: 1.5 })), `${AT}.startTimeUnixNano: expected a non-negative integer of nanoseconds`)
    rejects(body(span({ startTimeUnixNano: '1e18' })), `${AT}.startTimeUnixNano: expected a decimal string of nanoseconds`)
    rejects(body(span({ startTimeUnixNano: ' 1' })), `${AT}.startTimeUnixNano: expected a decimal string of nanoseconds`)
    rejects(body(span({ startTimeUnixNano: '' })), `${AT}.startTimeUnixNano: expected a decimal string of nanoseconds`)
  })

  it('rejects times past int64 (huge numbers)', () => {
    rejects(body(span({ endTimeUnixNano: '9223372036854775808' })), `${AT}.endTimeUnixNano: exceeds the int64 maximum`)
    rejects(body(span({ endTimeUnixNano: 1e19 })), `${AT}.endTimeUnixNano: exceeds the int64 maximum`)
    rejects(body(span({ endTimeUnixNano: '9'.repeat(1000) })), `${AT}.endTimeUnixNano: expected a decimal string of nanoseconds`)
    const { spans } = decodeJsonTraces(body(span({ endTimeUnixNano: '9223372036854775807' })))
    assert.equal(spans.at(-1)?.endTimeUnixNano, '9223372036854775807')
  })

  it('rejects an event without a time', () => {
    rejects(body(span({ events: [{ name: 'e' }] })), `${AT}.events[0].timeUnixNano: required`)
  })
})

describe('OTLP JSON kinds and status', () => {
  it('rejects a kind out of range, fractional, or misspelled', () => {
    const problem = 'expected 0–5 or a SPAN_KIND_* name'
    rejects(body(span({ kind: 6 })), `${AT}.kind: ${problem}`)
    rejects(body(span({ kind: -1 })), `${AT}.kind: ${problem}`)
    rejects(body(span({ kind: 2.5 })), `${AT}.kind: ${problem}`)
    rejects(body(span({ kind: 'CLIENT' })), `${AT}.kind: ${problem}`)
    rejects(body(span({ kind: 'SpanKind.CLIENT' })), `${AT}.kind: ${problem}`)
  })

  it('rejects a bad status code', () => {
    rejects(body(span({ status: { code: 3 } })), `${AT}.status.code: expected 0–2 or a STATUS_CODE_* name`)
    rejects(body(span({ status: 'ok' })), `${AT}.status: expected an object`)
  })
})

describe('OTLP JSON attributes', () => {
  it('rejects a plain value in place of an AnyValue (map form)', () => {
    rejects(body(span({ attributes: { 'llm.vendor': 'openai' } })), `${AT}.attributes["llm.vendor"]: expected an AnyValue object`)
  })

  it('rejects attributes that are neither list nor map', () => {
    rejects(body(span({ attributes: 'llm.vendor=openai' })), `${AT}.attributes: expected a list of {key, value} or a map of AnyValue`)
    rejects(body(span({ attributes: [['llm.vendor', 'openai']] })), `${AT}.attributes[0]: expected a {key, value} object`)
    rejects(body(span({ attributes: [{ key: 7, value: {} }] })), `${AT}.attributes[0].key: expected a string`)
  })

  it('rejects unknown AnyValue fields and wrong value types', () => {
    const at = (value: unknown): Json => span({ attributes: [{ key: 'k', value }] })
    rejects(body(at({ stringvalue: 'x' })), `${AT}.attributes["k"]: unknown AnyValue field "stringvalue"`)
    rejects(body(at({ stringValue: 5 })), `${AT}.attributes["k"].stringValue: expected a string`)
    rejects(body(at({ boolValue: 'true' })), `${AT}.attributes["k"].boolValue: expected a boolean`)
    rejects(body(at({ doubleValue: '1.5' })), `${AT}.attributes["k"].doubleValue: expected a number`)
    rejects(body(at({ bytesValue: 'not base64!' })), `${AT}.attributes["k"].bytesValue: expected a base64 string`)
    rejects(body(at({ stringValue: 'a', intValue: 1 })), `${AT}.attributes["k"]: expected one value field, got "stringValue" and "intValue"`)
    rejects(body(at({ arrayValue: { values: [{ intValue: 'x' }] } })), `${AT}.attributes["k"].arrayValue.values[0].intValue: expected an integer within int64`)
    rejects(
      body(at({ kvlistValue: { values: [{ key: 'inner', value: 'v' }] } })),
      `${AT}.attributes["k"].kvlistValue.values["inner"]: expected an AnyValue object`,
    )
  })

  it('rejects non-integer and out-of-range intValues', () => {
    const at = (intValue: unknown): Json => span({ attributes: { n: { intValue } } })
    const problem = 'expected an integer within int64'
    rejects(body(at(1.5)), `${AT}.attributes["n"].intValue: ${problem}`)
    rejects(body(at('1.5')), `${AT}.attributes["n"].intValue: ${problem}`)
    rejects(body(at('12abc')), `${AT}.attributes["n"].intValue: ${problem}`)
    rejects(body(at('9223372036854775808')), `${AT}.attributes["n"].intValue: ${problem}`)
    rejects(body(at('-9223372036854775809')), `${AT}.attributes["n"].intValue: ${problem}`)
    rejects(body(at(2 ** 63)), `${AT}.attributes["n"].intValue: ${problem}`)
    rejects(body(at(true)), `${AT}.attributes["n"].intValue: ${problem}`)
  })

  it('locates errors in resource, event and link attributes', () => {
    rejects(
      { resourceSpans: [{ resource: { attributes: { 'service.name': 'x' } } }] },
      'resourceSpans[0].resource.attributes["service.name"]: expected an AnyValue object',
    )
    rejects(
      body(span({ events: [{ timeUnixNano: '1', attributes: [{ key: 'e', value: { intValue: 0.5 } }] }] })),
      `${AT}.events[0].attributes["e"].intValue: expected an integer within int64`,
    )
  })

  it('stops deep nesting with an error, not a stack overflow', () => {
    let deep: Json = { stringValue: 'leaf' }
    for (let i = 0; i < 10_000; i++) deep = { arrayValue: { values: [deep] } }
    const decoded = decodeJsonTraces(body(span({ attributes: { deep } })))
    assert.equal(decoded.rejected, 1)
    assert.match(decoded.problems[0] ?? '', /^resourceSpans\[0\]\.scopeSpans\[1\]\.spans\[2\]\.attributes\["deep"\](\.arrayValue\.values\[0\]){32}\.arrayValue: nested deeper than 32 levels$/)
    let ok: Json = { stringValue: 'leaf' }
    for (let i = 0; i < 32; i++) ok = { kvlistValue: { values: [{ key: 'k', value: ok }] } }
    assert.doesNotThrow(() => decodeJsonTraces(body(span({ attributes: { ok } }))))
  })
})

describe('OTLP JSON structure', () => {
  it('rejects a missing or non-array resourceSpans', () => {
    rejects({}, 'resourceSpans: expected an array of ResourceSpans')
    rejects({ resourceSpans: {} }, 'resourceSpans: expected an array of ResourceSpans')
    rejects({ resource_spans: [] }, 'resourceSpans: expected an array of ResourceSpans')
  })

  it('accepts an empty resourceSpans as zero spans', () => {
    assert.deepEqual(decodeJsonTraces({ resourceSpans: [] }), { format: 'otlp-json', spans: [], rejected: 0, problems: [] })
  })

  it('rejects bodies that are neither object nor array', () => {
    rejects(null, 'body: expected an OTLP JSON object or a Langtrace array of spans')
    rejects('{}', 'body: expected an OTLP JSON object or a Langtrace array of spans')
  })

  it('rejects wrong shapes on the way down', () => {
    rejects({ resourceSpans: [7] }, 'resourceSpans[0]: expected an object')
    rejects({ resourceSpans: [{ scopeSpans: {} }] }, 'resourceSpans[0].scopeSpans: expected an array')
    rejects({ resourceSpans: [{ scopeSpans: [{ spans: [null] }] }] }, 'resourceSpans[0].scopeSpans[0].spans[0]: expected a span object')
    rejects(body(span({ name: undefined })), `${AT}.name: required`)
    rejects(body(span({ name: 5 })), `${AT}.name: expected a string`)
    rejects(body(span({ traceState: 5 })), `${AT}.traceState: expected a string`)
    rejects(body(span({ events: {} })), `${AT}.events: expected an array`)
  })
})

describe('Langtrace format', () => {
  const lt = (overrides: Json): Json => ({
    traceId: '7b1286681c494310c5e8b3459ea1508e',
    spanId: 'a40ebffecaf29be0',
    name: 'x',
    kind: 2,
    startTime: [1795316906, 958000000],
    endTime: [1795316906, 958178765],
    attributes: {},
    ...overrides,
  })

  it('locates errors by array index', () => {
    rejects([lt({}), lt({}), lt({}), lt({ spanId: 'a40ebffecaf29be' })], '[3].spanId: expected 16 hex characters')
    rejects([lt({ kind: 5 })], '[0].kind: expected a JS SDK span kind 0–4, SpanKind.INTERNAL … SpanKind.CONSUMER, or a SPAN_KIND_* name')
    rejects([lt({ endTime: [1795316906, 957999999] })], '[0].endTime: must not be before the start time')
    rejects([lt({ startTime: [1795316906, 1e9] })], '[0].startTime: expected [seconds, nanoseconds] with integer nanoseconds 0–999999999')
    rejects([lt({ startTime: undefined })], '[0].startTime: required')
    rejects([lt({ traceId: undefined, spanId: undefined })], '[0].traceId: required')
    rejects([lt({ attributes: { deep: [[[[]]]], bad: Symbol.iterator } })], '[0].attributes["bad"]: expected a string, number, boolean, array or object')
    rejects([42], '[0]: expected a span object')
  })

  it('checks Python ids and ISO times', () => {
    const py = (overrides: Json): Json => ({
      name: 'p',
      context: { trace_id: '0x4bf92f3577b34da6a3ce929d0e0e4736', span_id: '0x00f067aa0ba902b7' },
      kind: 'SpanKind.CLIENT',
      start_time: '2024-11-20T21:25:30.275984Z',
      end_time: '2024-11-20T21:25:31.083383Z',
      ...overrides,
    })
    rejects([py({ context: { trace_id: '0x4bf92f3577b34da6a3ce929d0e0e473', span_id: '0x00f067aa0ba902b7' } })], '[0].context.trace_id: expected 32 hex characters')
    rejects([py({ kind: 'SpanKind.SIDEWAYS' })], '[0].kind: expected a JS SDK span kind 0–4, SpanKind.INTERNAL … SpanKind.CONSUMER, or a SPAN_KIND_* name')
    rejects([py({ end_time: '2024-11-20T21:25:30.275983Z' })], '[0].end_time: must not be before the start time')
    rejects([py({ start_time: '2024-11-20 25:00:00Z' })], '[0].start_time: expected an ISO 8601 date-time such as 2024-11-20T21:25:30.275984Z')
    rejects([py({ start_time: '2024-02-30T00:00:00Z' })], '[0].start_time: expected an ISO 8601 date-time such as 2024-11-20T21:25:30.275984Z')
    rejects([py({ start_time: '2024-11-20T21:25:30.1234567891Z' })], '[0].start_time: expected an ISO 8601 date-time such as 2024-11-20T21:25:30.275984Z')
    rejects([py({ start_time: '1969-12-31T23:59:59Z' })], '[0].start_time: must not be before the Unix epoch')
    rejects([py({ status: { status_code: 'FINE' } })], '[0].status.status_code: expected UNSET, OK, ERROR, 0–2 or a STATUS_CODE_* name')
  })
})

describe('protobuf', () => {
  const Span = { traceId: 1, spanId: 2, parentSpanId: 4, name: 5, start: 7, end: 8 } as const

  /** ExportTraceServiceRequest{resource_spans{scope_spans{spans: span}}} from raw span bytes. */
  function request(spanBytes: Uint8Array): Uint8Array {
    const scopeSpans = protobuf.Writer.create().uint32((2 << 3) | 2).bytes(spanBytes).finish()
    const resourceSpans = protobuf.Writer.create().uint32((2 << 3) | 2).bytes(scopeSpans).finish()
    return protobuf.Writer.create().uint32((1 << 3) | 2).bytes(resourceSpans).finish()
  }

  function spanBytes(fields: { traceId?: Uint8Array; spanId?: Uint8Array; parentSpanId?: Uint8Array; start?: bigint; end?: bigint }): Uint8Array {
    const w = protobuf.Writer.create()
    w.uint32((Span.traceId << 3) | 2).bytes(fields.traceId ?? Buffer.from('f9c70fe8575dedef4f7bf1c3c9d3b9a3', 'hex'))
    w.uint32((Span.spanId << 3) | 2).bytes(fields.spanId ?? Buffer.from('54981588596c6a79', 'hex'))
    if (fields.parentSpanId) w.uint32((Span.parentSpanId << 3) | 2).bytes(fields.parentSpanId)
    w.uint32((Span.name << 3) | 2).string('n')
    w.uint32((Span.start << 3) | 1).fixed64(String(fields.start ?? 1n))
    w.uint32((Span.end << 3) | 1).fixed64(String(fields.end ?? 2n))
    return w.finish()
  }

  const AT_PB = 'resourceSpans[0].scopeSpans[0].spans[0]'

  it('accepts a well-formed minimal request', () => {
    const { spans } = decodeProtobufTraces(request(spanBytes({})))
    assert.equal(spans[0]?.spanId, '54981588596c6a79')
  })

  it('rejects ids of the wrong length and all-zero ids', () => {
    rejectsProtobuf(request(spanBytes({ traceId: new Uint8Array(15).fill(1) })), `${AT_PB}.traceId: expected 16 bytes, got 15`)
    rejectsProtobuf(request(spanBytes({ spanId: new Uint8Array(0) })), `${AT_PB}.spanId: expected 8 bytes, got 0`)
    rejectsProtobuf(request(spanBytes({ spanId: new Uint8Array(8) })), `${AT_PB}.spanId: must not be all zeros`)
    rejectsProtobuf(request(spanBytes({ parentSpanId: new Uint8Array(3).fill(1) })), `${AT_PB}.parentSpanId: expected 8 bytes, got 3`)
  })

  it('rejects an end before the start and times past int64', () => {
    rejectsProtobuf(request(spanBytes({ start: 10n, end: 9n })), `${AT_PB}.endTimeUnixNano: must not be before startTimeUnixNano`)
    rejectsProtobuf(request(spanBytes({ end: 2n ** 63n })), `${AT_PB}.endTimeUnixNano: exceeds the int64 maximum`)
  })

  it('rejects truncated and garbage bytes at path "body"', () => {
    const fixture = fixtureBytes('otel-js-otlp-proto-1.bin')
    rejectsProtobuf(fixture.subarray(0, fixture.length - 5), /^body: malformed protobuf ExportTraceServiceRequest \(.+\)$/)
    rejectsProtobuf(Buffer.from('{"resourceSpans":[]}'), /^body: malformed protobuf ExportTraceServiceRequest \(.+\)$/)
    rejectsProtobuf(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), /^body: malformed protobuf/)
    assert.throws(() => decodeProtobufTraces(fixture.subarray(0, 3)), (error: unknown) => {
      assert.ok(error instanceof SpanValidationError)
      assert.equal(error.path, 'body')
      return true
    })
  })

  it('reads an empty body as zero spans', () => {
    assert.deepEqual(decodeProtobufTraces(new Uint8Array(0)), { format: 'otlp-protobuf', spans: [], rejected: 0, problems: [] })
  })

  it('stops deep nesting with an error, not a stack overflow', () => {
    // AnyValue{array_value{values: AnyValue{…}}} nested far past any limit.
    let value: Uint8Array = protobuf.Writer.create().uint32((1 << 3) | 2).string('leaf').finish()
    for (let i = 0; i < 5_000; i++) {
      const array = protobuf.Writer.create().uint32((1 << 3) | 2).bytes(value).finish()
      value = protobuf.Writer.create().uint32((5 << 3) | 2).bytes(array).finish()
    }
    const keyValue = protobuf.Writer.create().uint32((1 << 3) | 2).string('deep').uint32((2 << 3) | 2).bytes(value).finish()
    const withAttribute = new Uint8Array([...spanBytes({}), ...protobuf.Writer.create().uint32((9 << 3) | 2).bytes(keyValue).finish()])
    rejectsProtobuf(request(withAttribute), /^body: malformed protobuf ExportTraceServiceRequest \(max depth exceeded\)$/)
  })

  it('applies the same 32-level AnyValue limit as JSON, with the same path', () => {
    const nested = (levels: number): Uint8Array => {
      let value: Uint8Array = protobuf.Writer.create().uint32((2 << 3) | 0).bool(true).finish()
      for (let i = 0; i < levels; i++) {
        const array = protobuf.Writer.create().uint32((1 << 3) | 2).bytes(value).finish()
        value = protobuf.Writer.create().uint32((5 << 3) | 2).bytes(array).finish()
      }
      const keyValue = protobuf.Writer.create().uint32((1 << 3) | 2).string('deep').uint32((2 << 3) | 2).bytes(value).finish()
      return request(new Uint8Array([...spanBytes({}), ...protobuf.Writer.create().uint32((9 << 3) | 2).bytes(keyValue).finish()]))
    }
    assert.doesNotThrow(() => decodeProtobufTraces(nested(32)))
    rejectsProtobuf(nested(33), new RegExp(String.raw`^${AT_PB.replace(/[[\].]/g, '\\$&')}\.attributes\["deep"\](\.arrayValue\.values\[0\]){32}\.arrayValue: nested deeper than 32 levels$`))
  })
})

describe('partial success', () => {
  const bad = (i: number) => span({ spanId: `bad${i}` })
  const problem = (scope: number, i: number) => `resourceSpans[0].scopeSpans[${scope}].spans[${i}].spanId: expected 16 hex characters`

  it('keeps the valid spans, counts every invalid one and names the first five', () => {
    const decoded = decodeJsonTraces({
      resourceSpans: [{ scopeSpans: [{ spans: [bad(0), span(), bad(2), bad(3)] }, { spans: [bad(0), bad(1), span({ name: 'kept' }), bad(3)] }] }],
    })
    assert.deepEqual(decoded.spans.map((record) => record.name), ['openai.chat', 'kept'])
    assert.equal(decoded.rejected, 6)
    assert.deepEqual(decoded.problems, [problem(0, 0), problem(0, 2), problem(0, 3), problem(1, 0), problem(1, 1)])
  })

  it('refuses a body whose spans are all invalid with its first problem', () => {
    rejects({ resourceSpans: [{ scopeSpans: [{ spans: [bad(0), bad(1)] }] }] }, problem(0, 0))
  })

  it('locates a problem after a rejected span from the right place (the path is unwound)', () => {
    const decoded = decodeJsonTraces({ resourceSpans: [{ scopeSpans: [{ spans: [span({ attributes: [{ key: 'k', value: { kvlistValue: { values: [{ key: 'x', value: 7 }] } } }] }), span({ kind: 9 })] }, { spans: [span()] }] }] })
    assert.equal(decoded.rejected, 2)
    assert.match(decoded.problems[1] ?? '', /^resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[1\]\.kind: /)
  })

  it('rejects Langtrace spans one by one too', () => {
    const lt = (overrides: Json): Json => ({ traceId: '7b1286681c494310c5e8b3459ea1508e', spanId: 'a40ebffecaf29be0', name: 'x', startTime: [1795316906, 958000000], endTime: [1795316906, 958178765], ...overrides })
    const decoded = decodeJsonTraces([lt({}), lt({ traceId: undefined })])
    assert.equal(decoded.spans.length, 1)
    assert.equal(decoded.rejected, 1)
  })
})
