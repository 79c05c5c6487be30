import assert from 'node:assert/strict'
import { it } from 'node:test'
import { decodeTraceBody, decodeProtobufTraces, SpanValidationError } from '../src/index.ts'
import { fixtureBytes, fixtureJson, JSON_FIXTURES, PROTOBUF_FIXTURES } from './support/fixtures.ts'
import { Random, randomBatch, toProtobuf } from './support/random-batch.ts'

// Mutated real bodies either decode to JSON-safe records or fail with SpanValidationError —
// never a TypeError, a RangeError, a stack overflow or a hang.

const MUTATIONS = 3000

function expectCleanOutcome(decode: () => { spans: unknown[] }, what: string): 'ok' | 'rejected' {
  try {
    const { spans } = decode()
    // Records go through Redis as JSON: nothing in them may break or change in a round trip.
    assert.deepEqual(JSON.parse(JSON.stringify(spans)), spans, `${what}: records do not survive JSON`)
    return 'ok'
  } catch (error) {
    if (error instanceof SpanValidationError) return 'rejected'
    assert.fail(`${what}: threw ${error instanceof Error ? error.stack : String(error)}`)
  }
}

function mutateBytes(r: Random, input: Uint8Array): Uint8Array {
  const bytes = [...input]
  const edits = r.int(1, 4)
  for (let e = 0; e < edits; e++) {
    const at = r.int(0, Math.max(0, bytes.length - 1))
    switch (r.int(0, 4)) {
      case 0:
        bytes[at] = r.int(0, 255)
        break
      case 1:
        bytes[at] = (bytes[at] ?? 0) ^ (1 << r.int(0, 7))
        break
      case 2:
        bytes.splice(at, r.int(1, 8))
        break
      case 3:
        bytes.splice(at, 0, ...r.bytes(r.int(1, 8)))
        break
      default:
        bytes.length = at
    }
  }
  return new Uint8Array(bytes)
}

const REPLACEMENTS: unknown[] = [
  null, true, false, 0, -1, 1.5, 2 ** 63, -(2 ** 70), Number.MAX_SAFE_INTEGER, '', 'x', '0', '-0', 'NaN', '0x10',
  '9223372036854775808', '99999999999999999999999999999', 'SPAN_KIND_CLIENT', 'SpanKind.CLIENT', '00000000000000000000000000000000',
  '2024-11-20T21:25:30.275984Z', [], [1, 2], [1795316906, 1e9], {}, { stringValue: 1 }, { intValue: '1.5' },
  { arrayValue: { values: [{}] } }, { kvlistValue: { values: [{ key: 1 }] } }, JSON.parse('{"__proto__": {"stringValue": "x"}, "constructor": 1}'),
]

function randomJson(r: Random, depth = 0): unknown {
  // Cloned: a shared replacement object mutated later could end up containing itself.
  if (depth > 2 || r.bool(0.6)) return structuredClone(r.pick(REPLACEMENTS))
  if (r.bool()) return Array.from({ length: r.int(0, 3) }, () => randomJson(r, depth + 1))
  const out: Record<string, unknown> = {}
  for (let i = 0; i < r.int(0, 3); i++) out[r.pick(['key', 'value', 'values', 'stringValue', 'code', r.string(4)])] = randomJson(r, depth + 1)
  return out
}

/** Every (container, key) slot of a JSON value, to pick one to mutate. */
function slots(value: unknown, out: Array<[Record<string, unknown> | unknown[], string | number]> = []): typeof out {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push([value, i])
      slots(item, out)
    })
  } else if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>
    for (const key of Object.keys(record)) {
      out.push([record, key])
      slots(record[key], out)
    }
  }
  return out
}

function mutateJson(r: Random, input: unknown): unknown {
  const copy: unknown = structuredClone(input)
  const edits = r.int(1, 3)
  for (let e = 0; e < edits; e++) {
    const all = slots(copy)
    if (all.length === 0) return randomJson(r)
    const [container, key] = r.pick(all)
    if (r.bool(0.15)) {
      if (Array.isArray(container)) container.splice(key as number, 1)
      else delete container[key as string]
    } else {
      ;(container as Record<string | number, unknown>)[key] = randomJson(r)
    }
  }
  return copy
}

it(`survives ${MUTATIONS} byte mutations of protobuf bodies`, () => {
  const r = new Random(7)
  const seeds = [...PROTOBUF_FIXTURES.map(fixtureBytes), toProtobuf(randomBatch(new Random(3))), toProtobuf(randomBatch(new Random(4)))]
  const outcomes = { ok: 0, rejected: 0 }
  for (let i = 0; i < MUTATIONS; i++) {
    const body = mutateBytes(r, r.pick(seeds))
    outcomes[expectCleanOutcome(() => decodeProtobufTraces(body), `protobuf mutation ${i}`)]++
  }
  // Both outcomes must occur, or the mutations are not exercising anything.
  assert.ok(outcomes.ok > 0 && outcomes.rejected > 0, JSON.stringify(outcomes))
})

it(`survives ${MUTATIONS} value replacements in JSON bodies`, () => {
  const r = new Random(11)
  const seeds = JSON_FIXTURES.map(fixtureJson)
  const outcomes = { ok: 0, rejected: 0 }
  for (let i = 0; i < MUTATIONS; i++) {
    const body = mutateJson(r, r.pick(seeds))
    // As text, the way bodies arrive: numbers past 2^53 are read again with their digits.
    const text = Buffer.from(JSON.stringify(body))
    outcomes[expectCleanOutcome(() => decodeTraceBody(text, 'json'), `JSON mutation ${i}`)]++
  }
  assert.ok(outcomes.ok > 0 && outcomes.rejected > 0, JSON.stringify(outcomes))
})
