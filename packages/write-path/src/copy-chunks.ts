// PostgreSQL's binary COPY format, written into fixed-size Buffers: no database access. Format:
// https://www.postgresql.org/docs/current/sql-copy.html (Binary Format); each type's bytes are
// what its `recv` function reads (text: UTF-8; int2/int4/int8: big-endian; timestamptz: int8
// microseconds since 2000-01-01 UTC; date: int4 days since then; jsonb: version byte 1, then the
// JSON text; numeric: copy-numeric.ts; arrays: array_recv's header, then each element's field;
// varbit: int4 bit count, then the bits).

import { toStorableJson, toStorableText } from '@tracewell/db'
import { JsonTextBytes } from '@tracewell/json-text'
import { numericFieldOfNumber, numericFieldOfText } from './copy-numeric.ts'

// Big enough that the per-chunk cost (a CopyData message, a socket write) is noise, small enough
// that a chunk is filled in cache and the socket has something to send early.
const CHUNK_BYTES = 128 * 1024

// 'PGCOPY\n\377\r\n\0', then int32 flags (no OIDs) and int32 header extension length, both 0.
const HEADER = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0])
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
const DAYS_FROM_UNIX_TO_POSTGRES_EPOCH = 10_957
const MS_A_DAY = 86_400_000
const ISO_DATE = /^\d{4}-\d\d-\d\d$/
const TEXT_OID = 25

/** Thrown while encoding a value the COPY would not store exactly as the statement path does. */
export class NotEncodable extends Error {}

/** Where the data stood before a row (CopyChunks.mark), to go back to when the row cannot be encoded. */
export interface CopyMark {
  readonly chunks: number
  readonly buffer: Buffer<ArrayBuffer>
  readonly at: number
}

/** Fills fixed-size Buffers with the COPY data of rows of `fieldCount` fields, starting a new one when the next field may not fit. */
export class CopyChunks {
  readonly chunks: Buffer[] = []
  readonly #fieldCount: number
  #buffer = Buffer.allocUnsafe(CHUNK_BYTES)
  #at = 0

  constructor(fieldCount: number) {
    this.#fieldCount = fieldCount
    HEADER.copy(this.#buffer)
    this.#at = HEADER.length
  }

  /** The position before a row; valid until chunks are taken from `chunks`. */
  mark(): CopyMark {
    return { chunks: this.chunks.length, buffer: this.#buffer, at: this.#at }
  }

  /** Drops everything written since `mark`: a row that turned out not to be encodable. */
  rewind(mark: CopyMark): void {
    this.chunks.length = mark.chunks
    this.#buffer = mark.buffer
    this.#at = mark.at
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
    this.#at = this.#buffer.writeInt16BE(this.#fieldCount, this.#at)
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
    if (Number.isSafeInteger(micros)) return this.timestampMicros(micros)
    const parsed = BigInt(nanos)
    if (parsed >= NANOS_OF_YEAR_10000) throw new NotEncodable()
    this.#bigint(parsed / 1000n - MICROS_FROM_UNIX_TO_POSTGRES_EPOCH)
  }

  /**
   * A numeric column given as a number (USD costs) or null, with the digits and display scale
   * Postgres gives the same number read from JSON by the statement path.
   */
  numeric(value: unknown): void {
    if (value === null || value === undefined) return this.null()
    const field = typeof value === 'number' ? numericFieldOfNumber(value) : undefined
    if (field === undefined) throw new NotEncodable()
    this.#field(field)
  }

  /** A numeric column given as plain decimal text (a trace's summed cost) or null, as numeric_in reads the text. */
  numericText(text: string | null): void {
    if (text === null) return this.null()
    const field = numericFieldOfText(text)
    if (field === undefined) throw new NotEncodable()
    this.#field(field)
  }

  int32(value: number): void {
    if (!Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) throw new NotEncodable()
    this.#reserve(8)
    this.#at = this.#buffer.writeInt32BE(value, this.#buffer.writeInt32BE(4, this.#at))
  }

  /** A timestamptz from microseconds since the Unix epoch. */
  timestampMicros(micros: number): void {
    if (!Number.isSafeInteger(micros)) throw new NotEncodable()
    this.#safeInt64(micros - MICROS_FROM_UNIX_TO_POSTGRES_EPOCH_NUMBER)
  }

  /** The day date() read last, and its days since 2000-01-01: every summary of a fold has the same. */
  #lastDay = ''
  #lastDays = 0

  /** A date given as `YYYY-MM-DD`. */
  date(day: string): void {
    if (day !== this.#lastDay) {
      const ms = ISO_DATE.test(day) ? Date.parse(`${day}T00:00:00Z`) : Number.NaN
      if (!Number.isInteger(ms)) throw new NotEncodable()
      this.#lastDays = ms / MS_A_DAY - DAYS_FROM_UNIX_TO_POSTGRES_EPOCH
      this.#lastDay = day
    }
    this.#reserve(8)
    this.#at = this.#buffer.writeInt32BE(this.#lastDays, this.#buffer.writeInt32BE(4, this.#at))
  }

  /**
   * A text[] of one dimension (none when empty), no NULL elements: array_recv's header (dimensions,
   * a has-nulls flag, the element type), the length and lower bound of the dimension, then each
   * element as a text field. Written within one buffer, its length filled in at the end: room for
   * every element at its worst (#utf8's bound) is reserved first, so no element starts a new one.
   */
  textArray(values: readonly string[]): void {
    let worst = 20 + 8
    for (let i = 0; i < values.length; i++) worst += 4 + (values[i] as string).length * 3
    this.#reserve(worst)
    const buffer = this.#buffer
    const start = this.#at
    let at = buffer.writeInt32BE(values.length === 0 ? 0 : 1, start + 4)
    at = buffer.writeInt32BE(0, at)
    at = buffer.writeInt32BE(TEXT_OID, at)
    if (values.length > 0) {
      at = buffer.writeInt32BE(values.length, at)
      at = buffer.writeInt32BE(1, at)
    }
    this.#at = at
    for (let i = 0; i < values.length; i++) this.text(values[i])
    buffer.writeInt32BE(this.#at - start - 4, start)
  }

  /** A bit varying of whole bytes (a word filter), or null. */
  varbit(bytes: Uint8Array | null): void {
    if (bytes === null) return this.null()
    this.#reserve(8 + bytes.length)
    const at = this.#buffer.writeInt32BE(bytes.length * 8, this.#buffer.writeInt32BE(4 + bytes.length, this.#at))
    this.#buffer.set(bytes, at)
    this.#at = at + bytes.length
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

/**
 * Frees the memory of CopyChunks' chunks now rather than at V8's next full collection; only
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
