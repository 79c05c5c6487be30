// Why this exists: JSON.parse cannot be bounded or interrupted. A body of a few dense megabytes
// (`[1,1,1,…` or `[[],[],…`) costs seconds of one thread and hundreds of MB to build before
// JSON.parse reaches an error at its end, or before a validator can say the shape is wrong; and
// V8's "Unexpected token" errors do not say where they are. This scanner checks the syntax of
// UTF-8 JSON bytes without building anything, counts the values and nesting on the way, and stops
// at the first problem. It reads the bytes chunk by chunk, so a body can be checked while it
// arrives (or is inflated) and refused before the rest of it exists. Streaming JSON parsers do
// the same work but build every token as a string, a few times slower.

/** What a scan found; positions count UTF-16 code units, as JSON.parse's messages do. */
export type JsonScanResult =
  | { kind: 'valid'; values: number }
  | { kind: 'malformed'; position: number; reason: string }
  | { kind: 'too-many-values'; limit: number }
  | { kind: 'too-deep'; limit: number }

export interface JsonScanLimits {
  /** Most values (objects, arrays, strings, numbers, literals) the document may hold. */
  maxValues: number
  /** Deepest nesting of objects and arrays. */
  maxDepth: number
}

const UNLIMITED: JsonScanLimits = { maxValues: Number.POSITIVE_INFINITY, maxDepth: Number.POSITIVE_INFINITY }

// Scanner states: what the next byte may be.
const VALUE = 0 // a value (document start, after ':', after ',' in an array)
const VALUE_OR_CLOSE = 1 // after '['
const KEY_OR_CLOSE = 2 // after '{'
const KEY = 3 // after ',' in an object
const COLON = 4 // after a key
const AFTER_VALUE = 5 // ',' or the container's close, or the end of the document
const STRING = 6
const ESCAPE = 7 // after a backslash in a string
const UNICODE = 8 // in the 4 hex digits of \u
const MINUS = 9 // a number's '-', a digit must follow
const ZERO = 10 // a leading 0: no more integer digits
const INTEGER = 11
const POINT = 12 // after '.', a digit must follow
const FRACTION = 13
const EXPONENT = 14 // after 'e'/'E', a sign or digit must follow
const EXPONENT_SIGN = 15 // a digit must follow
const EXPONENT_DIGITS = 16
const LITERAL = 17 // inside true, false or null

const IN_ARRAY = 0
const IN_OBJECT = 1

const TRUE = [0x74, 0x72, 0x75, 0x65]
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65]
const NULL = [0x6e, 0x75, 0x6c, 0x6c]

const isWhitespace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09
const isDigit = (byte: number) => byte >= 0x30 && byte <= 0x39
const isHexDigit = (byte: number) => isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
const isEscapable = (byte: number) =>
  byte === 0x22 || byte === 0x5c || byte === 0x2f || byte === 0x62 || byte === 0x66 || byte === 0x6e || byte === 0x72 || byte === 0x74

/**
 * A syntax check of one JSON document in UTF-8 (RFC 8259), fed in chunks of any size. The bytes
 * are assumed to be valid UTF-8 (which `isUtf8` checks natively); only positions depend on it.
 */
export class JsonScanner {
  private readonly limits: JsonScanLimits
  /** Bytes of the chunks before the current one. */
  private consumed = 0
  private state = VALUE
  private readonly stack: number[] = []
  private values = 0
  private stringIsKey = false
  private hexLeft = 0
  private literal: readonly number[] = TRUE
  private literalIndex = 0
  // Code units minus bytes so far: multi-byte UTF-8 characters are one (or, above U+FFFF, two)
  // UTF-16 code units. Outside strings a non-ASCII byte is an error, so only strings adjust it.
  private utf16Adjustment = 0

  constructor(limits: JsonScanLimits = UNLIMITED) {
    this.limits = limits
  }

  /** Reads the next chunk: the result as soon as the document is refused, undefined while it may still be valid. */
  write(bytes: Uint8Array): JsonScanResult | undefined {
    const result = this.scan(bytes)
    this.consumed += bytes.length
    return result
  }

  /** The verdict once every chunk has been written. */
  end(): JsonScanResult {
    const complete = this.state === AFTER_VALUE || numberMayEnd(this.state)
    if (complete && this.stack.length === 0) return { kind: 'valid', values: this.values }
    const inString = this.state === STRING || this.state === ESCAPE || this.state === UNICODE
    return this.malformed(this.consumed, inString ? 'Unterminated string in JSON' : 'Unexpected end of JSON input')
  }

  private scan(bytes: Uint8Array): JsonScanResult | undefined {
    const end = bytes.length
    let i = 0
    let state = this.state
    for (; i < end; i++) {
      let byte = bytes[i] as number
      if (state === STRING) {
        // Most bytes of a large document are string contents: skip plain ones in a tight loop.
        while (byte >= 0x20 && byte < 0x80 && byte !== 0x22 && byte !== 0x5c && i + 1 < end) byte = bytes[++i] as number
        if (byte === 0x22) state = this.stringIsKey ? COLON : AFTER_VALUE
        else if (byte === 0x5c) state = ESCAPE
        else if (byte < 0x20) return this.malformed(this.consumed + i, 'Bad control character in string literal')
        else if (byte >= 0x80) this.utf16Adjustment += (byte & 0xc0) === 0x80 ? -1 : byte >= 0xf0 ? 1 : 0
        continue
      }
      switch (state) {
        case VALUE:
        case VALUE_OR_CLOSE:
          if (isWhitespace(byte)) continue
          if (byte === 0x5d && state === VALUE_OR_CLOSE) {
            this.stack.pop()
            state = AFTER_VALUE
            continue
          }
          if (++this.values > this.limits.maxValues) return { kind: 'too-many-values', limit: this.limits.maxValues }
          state = this.valueStart(byte)
          if (state === -1) return this.unexpected(bytes, i, VALUE)
          if (this.stack.length > this.limits.maxDepth) return { kind: 'too-deep', limit: this.limits.maxDepth }
          continue
        case KEY_OR_CLOSE:
        case KEY:
          if (isWhitespace(byte)) continue
          if (byte === 0x22) {
            this.stringIsKey = true
            state = STRING
          } else if (byte === 0x7d && state === KEY_OR_CLOSE) {
            this.stack.pop()
            state = AFTER_VALUE
          } else {
            return this.unexpected(bytes, i, state)
          }
          continue
        case COLON:
          if (isWhitespace(byte)) continue
          if (byte !== 0x3a) return this.unexpected(bytes, i, state)
          state = VALUE
          continue
        case AFTER_VALUE:
          state = this.afterValue(byte)
          if (state === -1) return this.unexpected(bytes, i, AFTER_VALUE)
          continue
        case ESCAPE:
          if (byte === 0x75) {
            this.hexLeft = 4
            state = UNICODE
          } else if (isEscapable(byte)) {
            state = STRING
          } else {
            return this.malformed(this.consumed + i, 'Bad escaped character')
          }
          continue
        case UNICODE:
          if (!isHexDigit(byte)) return this.malformed(this.consumed + i, 'Bad Unicode escape')
          if (--this.hexLeft === 0) state = STRING
          continue
        case LITERAL:
          if (byte !== this.literal[this.literalIndex]) return this.unexpected(bytes, i, state)
          if (++this.literalIndex === this.literal.length) state = AFTER_VALUE
          continue
        default: {
          // In a number: either it goes on, or it has ended and this byte follows the value.
          const next = numberStep(state, byte)
          if (next !== -1) {
            state = next
            continue
          }
          if (!numberMayEnd(state)) return this.unexpected(bytes, i, state)
          state = this.afterValue(byte)
          if (state === -1) return this.unexpected(bytes, i, AFTER_VALUE)
        }
      }
    }
    this.state = state
    return undefined
  }

  /** The state after the first byte of a value, or -1 when no value starts so. */
  private valueStart(byte: number): number {
    switch (byte) {
      case 0x7b:
        this.stack.push(IN_OBJECT)
        return KEY_OR_CLOSE
      case 0x5b:
        this.stack.push(IN_ARRAY)
        return VALUE_OR_CLOSE
      case 0x22:
        this.stringIsKey = false
        return STRING
      case 0x2d:
        return MINUS
      case 0x30:
        return ZERO
      case 0x74:
        return this.startLiteral(TRUE)
      case 0x66:
        return this.startLiteral(FALSE)
      case 0x6e:
        return this.startLiteral(NULL)
      default:
        return isDigit(byte) ? INTEGER : -1
    }
  }

  private startLiteral(literal: readonly number[]): number {
    this.literal = literal
    this.literalIndex = 1
    return LITERAL
  }

  /** The state after `byte` follows a complete value, or -1 when it may not. */
  private afterValue(byte: number): number {
    if (isWhitespace(byte)) return AFTER_VALUE
    const container = this.stack.at(-1)
    if (byte === 0x2c && container !== undefined) return container === IN_ARRAY ? VALUE : KEY
    if ((byte === 0x5d && container === IN_ARRAY) || (byte === 0x7d && container === IN_OBJECT)) {
      this.stack.pop()
      return AFTER_VALUE
    }
    return -1
  }

  private unexpected(bytes: Uint8Array, at: number, state: number): JsonScanResult {
    const position = this.consumed + at
    if (state === AFTER_VALUE && this.stack.length === 0) return this.malformed(position, 'Unexpected non-whitespace character after JSON')
    // The character, not the byte: outside strings a non-ASCII byte starts a character (whose
    // rest may be in the next chunk; it then shows as U+FFFD).
    const text = Buffer.from(bytes.buffer, bytes.byteOffset + at, Math.min(4, bytes.length - at)).toString('utf8')
    return this.malformed(position, `Unexpected token '${String.fromCodePoint(text.codePointAt(0) as number)}'`)
  }

  private malformed(at: number, reason: string): JsonScanResult {
    return { kind: 'malformed', position: at + this.utf16Adjustment, reason }
  }
}

/** The number state after `byte`, or -1 when `byte` is not part of the number. */
function numberStep(state: number, byte: number): number {
  const digit = isDigit(byte)
  switch (state) {
    case MINUS:
      return byte === 0x30 ? ZERO : digit ? INTEGER : -1
    case ZERO:
    case INTEGER:
      if (digit && state === INTEGER) return INTEGER
      return byte === 0x2e ? POINT : byte === 0x65 || byte === 0x45 ? EXPONENT : -1
    case POINT:
      return digit ? FRACTION : -1
    case FRACTION:
      return digit ? FRACTION : byte === 0x65 || byte === 0x45 ? EXPONENT : -1
    case EXPONENT:
      return digit ? EXPONENT_DIGITS : byte === 0x2b || byte === 0x2d ? EXPONENT_SIGN : -1
    default:
      // EXPONENT_SIGN, EXPONENT_DIGITS
      return digit ? EXPONENT_DIGITS : -1
  }
}

const numberMayEnd = (state: number) => state === ZERO || state === INTEGER || state === FRACTION || state === EXPONENT_DIGITS

/** Scans a whole document held in one buffer. */
export function scanJson(bytes: Uint8Array, limits: JsonScanLimits = UNLIMITED): JsonScanResult {
  const scanner = new JsonScanner(limits)
  return scanner.write(bytes) ?? scanner.end()
}
