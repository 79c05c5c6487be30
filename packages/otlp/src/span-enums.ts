import type { ErrorPath } from './error-path.ts'
import { SpanKind, StatusCode } from './span-record.ts'

// Span kind and status code in every spelling clients send, mapped to the OTLP numbering.

const KIND_NAMES: Readonly<Record<string, number>> = {
  SPAN_KIND_UNSPECIFIED: SpanKind.UNSPECIFIED,
  SPAN_KIND_INTERNAL: SpanKind.INTERNAL,
  SPAN_KIND_SERVER: SpanKind.SERVER,
  SPAN_KIND_CLIENT: SpanKind.CLIENT,
  SPAN_KIND_PRODUCER: SpanKind.PRODUCER,
  SPAN_KIND_CONSUMER: SpanKind.CONSUMER,
}

/** The Python SDK's `str(SpanKind.CLIENT)` and the bare member names. */
const SDK_KIND_NAMES: Readonly<Record<string, number>> = {
  INTERNAL: SpanKind.INTERNAL,
  SERVER: SpanKind.SERVER,
  CLIENT: SpanKind.CLIENT,
  PRODUCER: SpanKind.PRODUCER,
  CONSUMER: SpanKind.CONSUMER,
}

const STATUS_NAMES: Readonly<Record<string, number>> = {
  STATUS_CODE_UNSET: StatusCode.UNSET,
  STATUS_CODE_OK: StatusCode.OK,
  STATUS_CODE_ERROR: StatusCode.ERROR,
}

const SDK_STATUS_NAMES: Readonly<Record<string, number>> = {
  UNSET: StatusCode.UNSET,
  OK: StatusCode.OK,
  ERROR: StatusCode.ERROR,
}

const KIND_PROBLEM = 'expected 0–5 or a SPAN_KIND_* name'
const STATUS_PROBLEM = 'expected 0–2 or a STATUS_CODE_* name'

function lookup(table: Readonly<Record<string, number>>, name: string): number | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined
}

/** OTLP span kind: 0–5 or its enum name; absent means SPAN_KIND_UNSPECIFIED. */
export function otlpKind(value: unknown, path: ErrorPath): number {
  if (value === undefined || value === null) return SpanKind.UNSPECIFIED
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 0 && value <= 5) return value
  } else if (typeof value === 'string') {
    const kind = lookup(KIND_NAMES, value)
    if (kind !== undefined) return kind
  }
  return path.fail(KIND_PROBLEM)
}

/** A protobuf kind is already a number; only the range needs checking. */
export function checkKind(kind: number, path: ErrorPath): number {
  if (kind < 0 || kind > 5) path.fail(KIND_PROBLEM)
  return kind
}

/**
 * The Langtrace SDK formats: a number in the JS SDK's numbering (INTERNAL = 0, one below OTLP),
 * the same as a numeric string, `SpanKind.CLIENT` (Python), `CLIENT`, or an OTLP enum name.
 */
export function langtraceKind(value: unknown, path: ErrorPath): number {
  if (value === undefined || value === null) return SpanKind.UNSPECIFIED
  let jsKind: number | undefined
  if (typeof value === 'number') {
    jsKind = value
  } else if (typeof value === 'string') {
    const otlp = lookup(KIND_NAMES, value) ?? lookup(SDK_KIND_NAMES, value.startsWith('SpanKind.') ? value.slice(9) : value)
    if (otlp !== undefined) return otlp
    if (value.length === 1) jsKind = value.charCodeAt(0) - 48
  }
  if (jsKind !== undefined && Number.isInteger(jsKind) && jsKind >= 0 && jsKind <= 4) return jsKind + 1
  return path.fail('expected a JS SDK span kind 0–4, SpanKind.INTERNAL … SpanKind.CONSUMER, or a SPAN_KIND_* name')
}

/** OTLP status code: 0–2 or its enum name; absent means STATUS_CODE_UNSET. */
export function otlpStatusCode(value: unknown, path: ErrorPath): number {
  if (value === undefined || value === null) return StatusCode.UNSET
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 0 && value <= 2) return value
  } else if (typeof value === 'string') {
    const code = lookup(STATUS_NAMES, value)
    if (code !== undefined) return code
  }
  return path.fail(STATUS_PROBLEM)
}

export function checkStatusCode(code: number, path: ErrorPath): number {
  if (code < 0 || code > 2) path.fail(STATUS_PROBLEM)
  return code
}

/**
 * Status codes of the SDK formats: JS numbers (same numbering as OTLP), Python's `UNSET`/`OK`/
 * `ERROR` (also as `StatusCode.OK`), or OTLP enum names.
 */
export function langtraceStatusCode(value: unknown, path: ErrorPath): number {
  if (typeof value === 'string') {
    const code =
      lookup(STATUS_NAMES, value) ??
      lookup(SDK_STATUS_NAMES, value.startsWith('StatusCode.') ? value.slice(11) : value)
    if (code !== undefined) return code
    return path.fail('expected UNSET, OK, ERROR, 0–2 or a STATUS_CODE_* name')
  }
  return otlpStatusCode(value, path)
}
