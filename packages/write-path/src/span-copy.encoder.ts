// A span batch in PostgreSQL's binary COPY format, for storeSpans: no database access. Format:
// https://www.postgresql.org/docs/current/sql-copy.html (Binary Format); each type's bytes are
// what its `recv` function reads (text: UTF-8; int2/int8: big-endian; timestamptz: int8
// microseconds since 2000-01-01 UTC; jsonb: version byte 1, then the JSON text; numeric: int16
// digit count, weight, sign and display scale, then base-10000 digits).
//
// Every row must read back exactly as the statement path (span-statement.ts) stores it. Where a
// value is one that path would treat in a way this encoder does not reproduce (a wrong type at
// run time, a number with a fraction, a time in year 10000 or later), encoding gives up and
// storeSpans uses that path.

import { spanColumnList, toStorableJson, toStorableText, type SpanColumn, type SpanFields } from '@tracewell/db'
import { JsonTextBytes } from '@tracewell/json-text'
import type { ProjectSpanSource } from './span-statement.ts'

/** The statement the encoded rows are read by; columns in spanColumnList order, as the rows are written. */
export const spanCopyStatement = `copy spans (${spanColumnList.map((column) => column.name).join(', ')}) from stdin with (format binary)`

// Big enough that the per-chunk cost (a CopyData message, a socket write) is noise, small enough
// that a chunk is filled in cache and the socket has something to send early.
const CHUNK_BYTES = 128 * 1024

// 'PGCOPY\n\377\r\n\0', then int32 flags (no OIDs) and int32 header extension length, both 0.
const HEADER = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0])
const FIELD_COUNT = spanColumnList.length
const NULL_LENGTH = -1
// jsonb `[]`: length 3, version byte 1, then the text.
const EMPTY_ARRAY_JSONB = Buffer.from([0, 0, 0, 3, 1, 0x5b, 0x5d])
// Where toStorableJson may have something to replace (`\u0000`, a lone surrogate's escape).
const UNICODE_ESCAPE = Buffer.from('\\u')

const MICROS_FROM_UNIX_TO_POSTGRES_EPOCH = 946_684_800_000_000n
const MICROS_FROM_UNIX_TO_POSTGRES_EPOCH_NUMBER = 946_684_800_000_000
// nanosToIsoMicros formats through Date, exact for four-digit years: later times take the statement path.
const NANOS_OF_YEAR_10000 = 253_402_300_800_000_000_000n
const DECIMAL_DIGITS = /^\d+$/
const DECIMAL_INT64 = /^-?\d{1,19}$/

/** Thrown while encoding a value the COPY would not store exactly as the statement path does. */
class NotEncodable extends Error {}

/** Fills fixed-size Buffers with the COPY data, starting a new one when the next field may not fit. */
class CopyChunks {
  readonly chunks: Buffer[] = []
  #buffer = Buffer.allocUnsafe(CHUNK_BYTES)
  #at = 0

  constructor() {
    HEADER.copy(this.#buffer)
    this.#at = HEADER.length
  }

  /** Writes the trailer (field count -1) and closes the last chunk. */
  finish(): void {
    this.#reserve(2)
    this.#at = this.#buffer.writeInt16BE(-1, this.#at)
    this.chunks.push(this.#buffer.subarray(0, this.#at))
  }

  #reserve(bytes: number): void {
    if (this.#at + bytes <= this.#buffer.length) return
    if (this.#at > 0) this.chunks.push(this.#buffer.subarray(0, this.#at))
    this.#buffer = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes))
    this.#at = 0
  }

  row(): void {
    this.#reserve(2)
    this.#at = this.#buffer.writeInt16BE(FIELD_COUNT, this.#at)
  }

  null(): void {
    this.#reserve(4)
    this.#at = this.#buffer.writeInt32BE(NULL_LENGTH, this.#at)
  }

  text(value: unknown): void {
    if (value === null || value === undefined) return this.null()
    if (typeof value !== 'string') throw new NotEncodable()
    this.#utf8(toStorableText(value), 0)
  }

  /**
   * Version byte 1, then the text, as jsonb_recv reads it; calls `read` with the UTF-8 bytes of the
   * JSON text just written (in a buffer that is part of the COPY data, to be read, not kept).
   */
  jsonb(value: unknown, read?: (bytes: Uint8Array, start: number, end: number) => void): void {
    if (value instanceof JsonTextBytes) return this.#jsonText(value.bytes, read)
    // Most spans have no events and no links.
    if (Array.isArray(value) && value.length === 0) return this.#field(EMPTY_ARRAY_JSONB)
    // JSON.stringify gives undefined for undefined (a key the statement path's row omits) and
    // 'null' for null; jsonb_to_recordset reads both as SQL NULL.
    const json = value === null ? undefined : JSON.stringify(value)
    if (json === undefined) return this.null()
    this.#utf8(toStorableJson(json), 1)
    read?.(this.#buffer, this.#textStart, this.#at)
  }

  /**
   * jsonb of JSON text given as its UTF-8 bytes, copied as they are. Text holding a backslash and a
   * `u` (found by one native scan: an escape, or text spelling one, as Python's ensure_ascii JSON
   * inside a string attribute does) is read by toStorableJson first, as the statement path's is, and
   * written from its answer only when that answer differs: an escape Postgres refuses.
   */
  #jsonText(text: Buffer, read: ((bytes: Uint8Array, start: number, end: number) => void) | undefined): void {
    if (text.length === 2 && text[0] === 0x5b && text[1] === 0x5d) return this.#field(EMPTY_ARRAY_JSONB)
    if (text.includes(UNICODE_ESCAPE)) {
      const json = text.toString('utf8')
      const storable = toStorableJson(json)
      if (storable !== json) {
        this.#utf8(storable, 1)
        read?.(this.#buffer, this.#textStart, this.#at)
        return
      }
    }
    this.#reserve(5 + text.length)
    const start = this.#at
    this.#buffer.writeInt32BE(text.length + 1, start)
    this.#buffer[start + 4] = 1
    this.#buffer.set(text, start + 5)
    this.#textStart = start + 5
    this.#at = this.#textStart + text.length
    read?.(this.#buffer, this.#textStart, this.#at)
  }

  /** The object sharedJsonb wrote last, and its field's bytes. */
  #shared: { value: object; field: Buffer } | undefined

  /**
   * jsonb of a value that consecutive rows share by reference (the decoder gives every span of a
   * resource the same resource attributes object): encoded for the first of them, its bytes copied
   * for the rest. The records are not changed while they are encoded.
   */
  sharedJsonb(value: unknown): void {
    if (value === null || typeof value !== 'object') return this.jsonb(value)
    if (this.#shared?.value === value) return this.#field(this.#shared.field)
    this.jsonb(value)
    // A jsonb field's length and version byte sit just before its text, in the same buffer.
    this.#shared = { value, field: Buffer.from(this.#buffer.subarray(this.#textStart - 5, this.#at)) }
  }

  /** A whole field (length and bytes) encoded before. */
  #field(bytes: Uint8Array): void {
    this.#reserve(bytes.length)
    this.#buffer.set(bytes, this.#at)
    this.#at += bytes.length
  }

  /** Where the text of the last field written by #utf8 starts. */
  #textStart = 0

  /** A length, an optional jsonb version byte, and the UTF-8 bytes of `text`. */
  #utf8(text: string, version: 0 | 1): void {
    const prefix = 4 + version
    // UTF-8 takes at most 3 bytes per UTF-16 unit; a long text is measured instead of reserving
    // three times its length, so that a large attribute does not close a chunk early.
    const worst = text.length * 3
    this.#reserve(prefix + (worst <= 4096 ? worst : Buffer.byteLength(text)))
    const buffer = this.#buffer
    const start = this.#at
    if (version === 1) buffer[start + 4] = 1
    const written = buffer.write(text, start + prefix)
    buffer.writeInt32BE(written + version, start)
    this.#textStart = start + prefix
    this.#at = start + prefix + written
  }

  int16(value: unknown): void {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < -32_768 || value > 32_767) throw new NotEncodable()
    this.#reserve(6)
    this.#at = this.#buffer.writeInt16BE(value, this.#buffer.writeInt32BE(2, this.#at))
  }

  /** A boolean column; absent (a record of a version before the field) is false. */
  bool(value: unknown): void {
    if (value !== undefined && typeof value !== 'boolean') throw new NotEncodable()
    this.#reserve(5)
    this.#at = this.#buffer.writeUInt8(value === true ? 1 : 0, this.#buffer.writeInt32BE(1, this.#at))
  }

  /** A bigint column given as a number (token counts) or null. */
  int64(value: unknown): void {
    if (value === null || value === undefined) return this.null()
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new NotEncodable()
    this.#safeInt64(value)
  }

  /** A bigint column given as a decimal string (duration_ns, which may exceed 2^53). */
  int64Decimal(value: unknown): void {
    if (typeof value !== 'string' || !DECIMAL_INT64.test(value)) throw new NotEncodable()
    const number = Number(value)
    if (Number.isSafeInteger(number)) return this.#safeInt64(number)
    const parsed = BigInt(value)
    if (BigInt.asIntN(64, parsed) !== parsed) throw new NotEncodable()
    this.#bigint(parsed)
  }

  /** A timestamptz from nanoseconds since the Unix epoch (decimal string), truncated to microseconds as nanosToIsoMicros does. */
  timestamp(nanos: unknown): void {
    if (typeof nanos !== 'string' || !DECIMAL_DIGITS.test(nanos)) throw new NotEncodable()
    // Every time before the year 2255 is a safe integer of microseconds: no BigInt needed.
    const micros = Number(nanos.slice(0, -3))
    if (Number.isSafeInteger(micros)) return this.#safeInt64(micros - MICROS_FROM_UNIX_TO_POSTGRES_EPOCH_NUMBER)
    const parsed = BigInt(nanos)
    if (parsed >= NANOS_OF_YEAR_10000) throw new NotEncodable()
    this.#bigint(parsed / 1000n - MICROS_FROM_UNIX_TO_POSTGRES_EPOCH)
  }

  /**
   * A numeric column given as a number (USD costs) or null, with the digits and display scale
   * Postgres gives the same number read from JSON by the statement path (numericDigits).
   */
  numeric(value: unknown): void {
    if (value === null || value === undefined) return this.null()
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new NotEncodable()
    this.#field(encodedNumeric(value))
  }

  #bigint(value: bigint): void {
    this.#reserve(12)
    this.#at = this.#buffer.writeBigInt64BE(value, this.#buffer.writeInt32BE(8, this.#at))
  }

  /**
   * A safe integer as int8, in two 32-bit words: the bytes writeBigInt64BE writes, without making
   * a BigInt for every timestamp, duration and token count of a span, which showed in the
   * writer's profile (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
   */
  #safeInt64(value: number): void {
    this.#reserve(12)
    const high = Math.floor(value / 2 ** 32)
    const at = this.#buffer.writeInt32BE(high, this.#buffer.writeInt32BE(8, this.#at))
    this.#at = this.#buffer.writeUInt32BE(value - high * 2 ** 32, at)
  }
}

// Costs repeat (the same model, the same token counts): each number's field is built once, in a
// cache that is emptied when full. Building one takes a few string operations (numericDigits),
// which showed in the writer's profile (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
const numericFields = new Map<number, Buffer>()
const NUMERIC_FIELDS_MAX = 4096

/** A numeric field of COPY: its length, then digit count, weight, sign, display scale and digits. */
function encodedNumeric(value: number): Buffer {
  let field = numericFields.get(value)
  if (field !== undefined) return field
  const { digits, weight, scale } = numericDigits(value)
  field = Buffer.alloc(4 + 8 + 2 * digits.length)
  let at = field.writeInt32BE(8 + 2 * digits.length, 0)
  at = field.writeInt16BE(digits.length, at)
  at = field.writeInt16BE(weight, at)
  at = field.writeUInt16BE(0, at) // sign: positive
  at = field.writeInt16BE(scale, at)
  for (const digit of digits) at = field.writeInt16BE(digit, at)
  if (numericFields.size >= NUMERIC_FIELDS_MAX) numericFields.clear()
  numericFields.set(value, field)
  return field
}

/**
 * A non-negative finite number as Postgres numeric's base-10000 digits, the weight of the first
 * (its power of 10000) and the display scale: the fraction digits of JavaScript's shortest
 * decimal form of the number, which is what the statement path's JSON carries and numeric_in
 * keeps (1e-7 is 0.0000001, scale 7). Leading and trailing zero digits are left out, as Postgres
 * stores them.
 */
function numericDigits(value: number): { digits: number[]; weight: number; scale: number } {
  const [mantissa = '0', exponentText] = String(value).split('e')
  const exponent = exponentText === undefined ? 0 : Number(exponentText)
  const [whole = '0', fraction = ''] = mantissa.split('.')
  // Shift the decimal point by the exponent over the digit string.
  const allDigits = whole + fraction
  const point = whole.length + exponent
  const intPart = point <= 0 ? '0' : allDigits.slice(0, point).padEnd(point, '0')
  const fracPart = point <= 0 ? '0'.repeat(-point) + allDigits : allDigits.slice(point)
  const scale = fracPart.length
  const intGroups = intPart.padStart(Math.ceil(intPart.length / 4) * 4, '0').match(/\d{4}/g) ?? []
  const fracGroups = fracPart === '' ? [] : (fracPart.padEnd(Math.ceil(fracPart.length / 4) * 4, '0').match(/\d{4}/g) ?? [])
  let digits = [...intGroups, ...fracGroups].map(Number)
  let weight = intGroups.length - 1
  while (digits.length > 0 && digits[0] === 0) {
    digits = digits.slice(1)
    weight--
  }
  while (digits.length > 0 && digits.at(-1) === 0) digits.pop()
  return { digits, weight: digits.length === 0 ? 0 : weight, scale }
}

/**
 * Frees the memory of SpanCopyEncoder's chunks now rather than at V8's next full collection; only
 * once Postgres has acknowledged the COPY, when nothing of them is left to write (after a failed
 * COPY pg-copy-streams may still be flushing them). A batch's chunks live through its COPY, long
 * enough to be promoted, and would then wait, garbage, for a full collection: with the writer's
 * concurrent jobs, they were the bulk of its `arrayBuffers` at its peak RSS
 * (docs/benchmarks.md#figures-behind-code-comments-2026-12-06). Each chunk is the only view of its ArrayBuffer (CopyChunks allocates
 * one per chunk, at least 128 KB, so never from Node's shared pool).
 */
export function releaseCopyChunks(chunks: readonly Buffer[]): void {
  for (const { buffer } of chunks) {
    if (!(buffer instanceof ArrayBuffer)) continue
    try {
      buffer.transfer(0)
    } catch {
      // Not detachable (nothing here marks it so): left to the collector, as before.
    }
  }
}

/** What SpanCopyEncoder tells of each span: the span, then the bytes of the JSON text users search in it. */
export interface SpanEncoded {
  span(projectId: string, span: SpanFields): void
  /**
   * The UTF-8 bytes of the span's attributes as JSON, then of its events' (`bytes[start]` to
   * `bytes[end - 1]`), each to be read now, not kept; called unbound.
   */
  searchableText(bytes: Uint8Array, start: number, end: number): void
  /** Called once a source's spans are all encoded. */
  sourceEnd(): void
}

/**
 * Encodes span sources into binary COPY data one source at a time, so that a COPY can send the
 * chunks one source filled while the next is encoded (copySpans streams them). Text and
 * JSON are made storable as spanRowsJson makes them (U+0000 and lone surrogates → U+FFFD).
 * Each source's spans are asked for once and encoded before the next source's, so only one
 * source's records need to be alive at a time.
 */
export class SpanCopyEncoder {
  readonly #copy = new CopyChunks()
  readonly #onSpan: SpanEncoded | undefined
  /** How many of the chunks were handed out by takeFilled. */
  #taken = 0

  constructor(onSpan?: SpanEncoded) {
    this.#onSpan = onSpan
  }

  /**
   * Encodes the source's spans; false when one holds a value only the statement path stores
   * exactly (see the top of this file), after which this encoder's data is unusable.
   */
  add(source: ProjectSpanSource): boolean {
    try {
      encodeSource(this.#copy, source, this.#onSpan)
      return true
    } catch (error) {
      if (error instanceof NotEncodable) return false
      throw error
    }
  }

  /** The chunks filled since the last call: the data so far, but for the chunk still being filled. */
  takeFilled(): Buffer[] {
    const filled = this.#copy.chunks.slice(this.#taken)
    this.#taken = this.#copy.chunks.length
    return filled
  }

  /** The rest of the data (the chunk being filled and the trailer); nothing may be added after it. */
  finish(): Buffer[] {
    this.#copy.finish()
    return this.takeFilled()
  }

  /** Every chunk made, for releaseCopyChunks once the COPY has been committed. */
  get chunks(): readonly Buffer[] {
    return this.#copy.chunks
  }
}

/** Appends a row for each of the source's spans, its columns as spanColumns describes them; throws NotEncodable. */
function encodeSource(copy: CopyChunks, source: ProjectSpanSource, onSpan: SpanEncoded | undefined): void {
  const searchable = onSpan?.searchableText
  for (const span of source.spans()) {
    onSpan?.span(source.projectId, span)
    copy.row()
    copy.text(source.projectId)
    // The rest in spanColumnList order, project_id (the source's) first.
    for (let i = 1; i < spanColumnList.length; i++) {
      const column = spanColumnList[i] as SpanColumn
      const value = span[column.field as keyof SpanFields]
      switch (column.kind) {
        case 'text': copy.text(value); break
        case 'int16': copy.int16(value); break
        case 'int64': copy.int64(value); break
        case 'int64Decimal': copy.int64Decimal(value); break
        case 'timestamp': copy.timestamp(value); break
        case 'numeric': copy.numeric(value); break
        case 'bool': copy.bool(value); break
        case 'jsonb': copy.jsonb(value, column.searchable === true ? searchable : undefined); break
        case 'sharedJsonb': copy.sharedJsonb(value); break
      }
    }
  }
  onSpan?.sourceEnd()
}
