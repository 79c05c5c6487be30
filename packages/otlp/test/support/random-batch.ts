// Random trace batches for property tests: one abstract model, encoded as OTLP JSON (list and map
// attribute forms) and as protobuf, so every decoder can be checked against the others.
import { parseJsonText } from '@tracewell/json-text'
import { seededRandom } from '@tracewell/test-support'
import { ExportTraceServiceRequest } from '../../src/otlp-trace.schema.ts'

export class Random {
  readonly next: () => number

  constructor(seed: number) {
    this.next = seededRandom(seed)
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  bool(p = 0.5): boolean {
    return this.next() < p
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)] as T
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n)
    for (let i = 0; i < n; i++) out[i] = this.int(0, 255)
    return out
  }

  /** Non-zero bytes, as a valid id must be. */
  id(n: 16 | 8): Uint8Array {
    const out = this.bytes(n)
    if (out.every((b) => b === 0)) out[n - 1] = 1
    return out
  }

  bigint(max: bigint): bigint {
    let n = 0n
    for (let i = 0; i < 4; i++) n = (n << 16n) | BigInt(this.int(0, 0xffff))
    return n % (max + 1n)
  }

  string(maxLength = 12): string {
    const alphabets = ['abcxyz.-_ ', 'ünïcødé✓€', '"\\/\n\t{}[]', '日本語😀🚀']
    let s = ''
    const length = this.int(0, maxLength)
    for (let i = 0; i < length; i++) s += this.pick([...this.pick(alphabets)])
    return s
  }
}

export type ModelValue =
  | { kind: 'string'; value: string }
  | { kind: 'int'; value: bigint }
  | { kind: 'double'; value: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'bytes'; value: Uint8Array }
  | { kind: 'array'; value: ModelValue[] }
  | { kind: 'kvlist'; value: ModelKeyValue[] }
  | { kind: 'empty' }

export interface ModelKeyValue {
  key: string
  value: ModelValue
}

export interface ModelSpan {
  traceId: Uint8Array
  spanId: Uint8Array
  parentSpanId: Uint8Array | null
  name: string
  kind: number
  start: bigint
  end: bigint
  traceState: string
  status: { code: number; message: string } | null
  attributes: ModelKeyValue[]
  events: Array<{ time: bigint; name: string; attributes: ModelKeyValue[] }>
  links: Array<{ traceId: Uint8Array; spanId: Uint8Array; traceState: string; attributes: ModelKeyValue[] }>
}

export interface ModelBatch {
  resources: Array<{
    attributes: ModelKeyValue[]
    scopes: Array<{ scope: { name: string; version: string } | null; spans: ModelSpan[] }>
  }>
}

const INT64_MAX = 9223372036854775807n
const SPECIAL_KEYS = ['__proto__', 'constructor', '', 'llm.vendor', 'gen_ai.usage.input_tokens', 'service.name']

function randomValue(r: Random, depth: number): ModelValue {
  switch (r.int(0, depth >= 3 ? 5 : 7)) {
    case 0:
      return { kind: 'string', value: r.string() }
    case 1: {
      const magnitude = r.pick([100n, 2n ** 53n, INT64_MAX])
      const n = r.bigint(magnitude)
      return { kind: 'int', value: r.bool() ? n : -n - (magnitude === INT64_MAX ? r.pick([0n, 1n]) : 0n) }
    }
    case 2: {
      const special = [Number.NaN, Infinity, -Infinity, 0, 0.25, 1e300, -5e-324, 3]
      // -0 is left out: JSON cannot tell it from 0.
      return { kind: 'double', value: r.bool(0.3) ? r.pick(special) : (r.next() - 0.5) * 10 ** r.int(-5, 20) || 1 }
    }
    case 3:
      return { kind: 'bool', value: r.bool() }
    case 4:
      return { kind: 'bytes', value: r.bytes(r.int(0, 10)) }
    case 5:
      return { kind: 'empty' }
    case 6:
      return { kind: 'array', value: Array.from({ length: r.int(0, 3) }, () => randomValue(r, depth + 1)) }
    default:
      return {
        kind: 'kvlist',
        value: Array.from({ length: r.int(0, 3) }, () => ({ key: r.string(6), value: randomValue(r, depth + 1) })),
      }
  }
}

/** Attributes with unique keys (the map form cannot carry duplicates). */
function randomAttributes(r: Random, max: number): ModelKeyValue[] {
  const keys = new Set<string>()
  const length = r.int(0, max)
  for (let i = 0; i < length; i++) keys.add(r.bool(0.2) ? r.pick(SPECIAL_KEYS) : `attr.${r.string(8)}`)
  return [...keys].map((key) => ({ key, value: randomValue(r, 0) }))
}

function randomTime(r: Random): bigint {
  return r.bool(0.05) ? INT64_MAX : 1_600_000_000_000_000_000n + r.bigint(200_000_000_000_000_000n)
}

function randomSpan(r: Random): ModelSpan {
  const start = r.bool(0.05) ? 0n : randomTime(r)
  const end = start + r.bigint(INT64_MAX - start < 10n ** 12n ? INT64_MAX - start : 10n ** 12n)
  return {
    traceId: r.id(16),
    spanId: r.id(8),
    parentSpanId: r.bool() ? r.id(8) : null,
    name: r.string(),
    kind: r.int(0, 5),
    start,
    end,
    traceState: r.bool(0.2) ? 'vendor=abc,other=1' : '',
    status: r.bool(0.5) ? { code: r.int(0, 2), message: r.bool() ? r.string() : '' } : null,
    attributes: randomAttributes(r, 6),
    events: Array.from({ length: r.int(0, 2) }, () => ({
      time: randomTime(r),
      name: r.string(),
      attributes: randomAttributes(r, 2),
    })),
    links: Array.from({ length: r.int(0, 2) }, () => ({
      traceId: r.id(16),
      spanId: r.id(8),
      traceState: r.bool(0.3) ? 'k=v' : '',
      attributes: randomAttributes(r, 2),
    })),
  }
}

export function randomBatch(r: Random): ModelBatch {
  return {
    resources: Array.from({ length: r.int(0, 3) }, () => ({
      attributes: randomAttributes(r, 3),
      scopes: Array.from({ length: r.int(0, 3) }, () => ({
        scope: r.bool(0.8) ? { name: r.bool(0.9) ? r.string() : '', version: r.bool() ? '1.2.3' : '' } : null,
        spans: Array.from({ length: r.int(0, 4) }, () => randomSpan(r)),
      })),
    })),
  }
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex')
}

// ---- OTLP JSON ----

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** An id as a JSON exporter might write it: hex in either case, sometimes base64. */
function jsonId(r: Random, bytes: Uint8Array): string {
  if (r.bool(0.1)) return Buffer.from(bytes).toString('base64')
  const h = hex(bytes)
  return r.bool(0.2) ? h.toUpperCase() : h
}

function jsonTime(r: Random, nanos: bigint): Json {
  return nanos <= BigInt(Number.MAX_SAFE_INTEGER) && r.bool() ? Number(nanos) : nanos.toString()
}

function jsonValue(r: Random, value: ModelValue, form: 'list' | 'map'): Json {
  switch (value.kind) {
    case 'string':
      return { stringValue: value.value }
    case 'int': {
      const safe = value.value >= -BigInt(Number.MAX_SAFE_INTEGER) && value.value <= BigInt(Number.MAX_SAFE_INTEGER)
      return { intValue: safe && r.bool() ? Number(value.value) : value.value.toString() }
    }
    case 'double':
      return { doubleValue: Number.isFinite(value.value) ? value.value : String(value.value) }
    case 'bool':
      return { boolValue: value.value }
    case 'bytes':
      return { bytesValue: Buffer.from(value.value).toString('base64') }
    case 'array':
      return { arrayValue: { values: value.value.map((v) => jsonValue(r, v, form)) } }
    case 'kvlist':
      return { kvlistValue: { values: value.value.map((kv) => ({ key: kv.key, value: jsonValue(r, kv.value, form) })) } }
    case 'empty':
      return {}
  }
}

function jsonAttributes(r: Random, attributes: ModelKeyValue[], form: 'list' | 'map'): Json {
  if (form === 'list') return attributes.map((kv) => ({ key: kv.key, value: jsonValue(r, kv.value, form) }))
  const map: Record<string, Json> = {}
  for (const kv of attributes) {
    Object.defineProperty(map, kv.key, { value: jsonValue(r, kv.value, form), enumerable: true, writable: true, configurable: true })
  }
  return map
}

const KIND_NAMES = ['SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER']
const STATUS_NAMES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR']

function jsonSpan(r: Random, span: ModelSpan, form: 'list' | 'map'): Json {
  const out: Record<string, Json> = {
    traceId: jsonId(r, span.traceId),
    spanId: jsonId(r, span.spanId),
    name: span.name,
    startTimeUnixNano: jsonTime(r, span.start),
    endTimeUnixNano: jsonTime(r, span.end),
    attributes: jsonAttributes(r, span.attributes, form),
    droppedAttributesCount: 0,
    flags: 257,
  }
  if (span.parentSpanId !== null) out.parentSpanId = jsonId(r, span.parentSpanId)
  else if (r.bool()) out.parentSpanId = ''
  if (span.kind !== 0 || r.bool()) out.kind = r.bool() ? span.kind : (KIND_NAMES[span.kind] as string)
  if (span.traceState !== '' || r.bool()) out.traceState = span.traceState
  if (span.status !== null) {
    out.status = { code: r.bool() ? span.status.code : (STATUS_NAMES[span.status.code] as string), message: span.status.message }
  }
  if (span.events.length > 0 || r.bool()) {
    out.events = span.events.map((e) => ({
      timeUnixNano: jsonTime(r, e.time),
      name: e.name,
      attributes: jsonAttributes(r, e.attributes, form),
    }))
  }
  if (span.links.length > 0 || r.bool()) {
    out.links = span.links.map((l) => ({
      traceId: jsonId(r, l.traceId),
      spanId: jsonId(r, l.spanId),
      traceState: l.traceState,
      attributes: jsonAttributes(r, l.attributes, form),
    }))
  }
  return out
}

/** The batch as an OTLP JSON body, serialised and parsed again as the HTTP layer would. */
export function toOtlpJson(batch: ModelBatch, form: 'list' | 'map', seed: number): unknown {
  const r = new Random(seed)
  const body = {
    resourceSpans: batch.resources.map((resource) => ({
      resource: { attributes: jsonAttributes(r, resource.attributes, form), droppedAttributesCount: 0 },
      scopeSpans: resource.scopes.map((s) => ({
        ...(s.scope === null ? {} : { scope: { name: s.scope.name, version: s.scope.version } }),
        spans: s.spans.map((span) => jsonSpan(r, span, form)),
      })),
      schemaUrl: '',
    })),
  }
  // Through JSON text and back, as ingest reads a body (parseJsonText, not JSON.parse).
  return parseJsonText(JSON.stringify(body))
}

// ---- protobuf ----

/** protobufjs writes 64-bit fields from decimal strings (as long.js bits, so 2^63 and up too). */
function longFrom(value: bigint): string {
  return value.toString()
}

function pbValue(value: ModelValue): Record<string, unknown> {
  switch (value.kind) {
    case 'string':
      return { stringValue: value.value }
    case 'int':
      return { intValue: longFrom(value.value) }
    case 'double':
      return { doubleValue: value.value }
    case 'bool':
      return { boolValue: value.value }
    case 'bytes':
      return { bytesValue: value.value }
    case 'array':
      return { arrayValue: { values: value.value.map(pbValue) } }
    case 'kvlist':
      return { kvlistValue: { values: value.value.map((kv) => ({ key: kv.key, value: pbValue(kv.value) })) } }
    case 'empty':
      return {}
  }
}

function pbAttributes(attributes: ModelKeyValue[]): unknown[] {
  return attributes.map((kv) => ({ key: kv.key, value: pbValue(kv.value) }))
}

function pbSpan(span: ModelSpan): Record<string, unknown> {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId ?? new Uint8Array(0),
    name: span.name,
    kind: span.kind,
    startTimeUnixNano: longFrom(span.start),
    endTimeUnixNano: longFrom(span.end),
    traceState: span.traceState,
    status: span.status ?? undefined,
    attributes: pbAttributes(span.attributes),
    events: span.events.map((e) => ({ timeUnixNano: longFrom(e.time), name: e.name, attributes: pbAttributes(e.attributes) })),
    links: span.links.map((l) => ({ ...l, attributes: pbAttributes(l.attributes) })),
  }
}

export function toProtobuf(batch: ModelBatch): Uint8Array {
  return ExportTraceServiceRequest.encode({
    resourceSpans: batch.resources.map((resource) => ({
      resource: { attributes: pbAttributes(resource.attributes) },
      scopeSpans: resource.scopes.map((s) => ({ scope: s.scope ?? undefined, spans: s.spans.map(pbSpan) })),
    })),
  }).finish()
}
