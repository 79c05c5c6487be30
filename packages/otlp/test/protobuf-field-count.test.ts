import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import protobuf from 'protobufjs'
import { countProtobufFields } from '../src/index.ts'

// The wire walk that bounds a protobuf body's parse work (MAX_PROTOBUF_FIELDS): every field of
// every message of the trace schema counted, bytes and strings skipped by their length, and an
// early answer once the limit is passed. Messages written tag by tag from opentelemetry-proto's
// field numbers, independent of the decoder's schema.

const LEN = 2
const VARINT = 0
const I64 = 1

type Field = [field: number, wire: number, value: Uint8Array | string | number]

function message(...fields: Field[]): Uint8Array {
  const w = protobuf.Writer.create()
  for (const [field, wire, value] of fields) {
    w.uint32((field << 3) | wire)
    if (wire === LEN && typeof value === 'string') w.string(value)
    else if (wire === LEN) w.bytes(value as Uint8Array)
    else if (wire === VARINT) w.int64(String(value))
    else w.fixed64(String(value))
  }
  return w.finish()
}

const stringValue = (text: string) => message([1, LEN, text])
const keyValue = (key: string, value: Uint8Array) => message([1, LEN, key], [2, LEN, value])
const span = (...attributes: Uint8Array[]) =>
  message(
    [1, LEN, new Uint8Array(16).fill(1)],
    [2, LEN, new Uint8Array(8).fill(2)],
    [5, LEN, 'chat'],
    [7, I64, 1_700_000_000],
    [8, I64, 1_700_000_001],
    ...attributes.map((attribute): Field => [9, LEN, attribute]),
  )
const request = (...spans: Uint8Array[]) =>
  message([1, LEN, message([1, LEN, message([1, LEN, keyValue('service.name', stringValue('svc'))])], [2, LEN, message(...spans.map((s): Field => [2, LEN, s]))])])

describe('countProtobufFields', () => {
  it('counts every field of every nested message of the trace schema', () => {
    // request 1 + resourceSpans (resource, scopeSpans) 2 + resource's attribute 1 + its key and
    // value 2 + the value's string 1 + scopeSpans' spans 2 + each span's five fields 10 = 19.
    assert.equal(countProtobufFields(request(span(), span()), 1_000), 19)
    // One span is 13 (19 less a span's field and its five); an attribute adds the span's field,
    // the pair's key and value, and the value's string.
    assert.equal(countProtobufFields(request(span(keyValue('k', stringValue('v')))), 1_000), 13 + 4)
  })

  it('descends into arrays and key-value lists, skips strings and bytes however long', () => {
    const nested = message([5, LEN, message([1, LEN, stringValue('a')], [1, LEN, stringValue('b')])])
    const list = message([6, LEN, message([1, LEN, keyValue('x', stringValue('y'))])])
    const long = stringValue('z'.repeat(100_000))
    // nested: anyValue.array 1 + array's two values 2 + their strings 2 = 5, in a pair (+3) = 8;
    // list: anyValue.kvlist 1 + list's value 1 + pair key and value 2 + string 1 = 5, +3 = 8; long: 4.
    assert.equal(countProtobufFields(request(span(keyValue('n', nested), keyValue('l', list), keyValue('s', long))), 1_000), 13 + 8 + 8 + 4)
  })

  it('answers limit + 1 as soon as the fields pass the limit, without walking the rest', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => keyValue(`k${i}`, stringValue('v')))
    assert.equal(countProtobufFields(request(span(...many)), 5_000), 5_001)
  })

  it('stops at bytes that are not a message, for the decoder to say what is wrong', () => {
    assert.equal(countProtobufFields(Buffer.alloc(64, 0xff), 1_000), 0)
    const body = request(span())
    assert.ok(countProtobufFields(body.subarray(0, body.length - 3), 1_000) < 19)
    assert.equal(countProtobufFields(new Uint8Array(0), 1_000), 0)
  })
})
