import { SpanValidationError } from './validation-error.ts'

const FIELD = 0
const INDEX = 1
const KEY = 2

/**
 * Where in the body the decoder is, kept as raw segments and rendered to a string only when a
 * validation error is thrown: the success path (almost every request) builds no path strings.
 * Errors are thrown, never recovered from, so callers do not need to unwind on failure.
 */
export class ErrorPath {
  private readonly kinds: number[] = []
  private readonly values: Array<string | number> = []
  private depth = 0

  /** Enters `.name`. */
  field(name: string): void {
    this.push(FIELD, name)
  }

  /** Enters `[i]`. */
  index(i: number): void {
    this.push(INDEX, i)
  }

  /** Enters `["key"]` (an attribute key, quoted because keys may contain anything). */
  key(key: string): void {
    this.push(KEY, key)
  }

  /** Decodes `value` as field `name` of the current position: errors inside it name the field. */
  decodeField<V, T>(name: string, value: V, decode: (value: V, path: ErrorPath) => T): T {
    this.push(FIELD, name)
    const decoded = decode(value, this)
    this.depth--
    return decoded
  }

  /** Leaves the innermost segment. */
  pop(): void {
    this.depth--
  }

  /** Throws a SpanValidationError at the current position. */
  fail(problem: string): never {
    throw new SpanValidationError(this.render(), problem)
  }

  /** Throws a SpanValidationError at field `name` of the current position. */
  failAt(name: string, problem: string): never {
    this.field(name)
    return this.fail(problem)
  }

  render(): string {
    let out = ''
    for (let i = 0; i < this.depth; i++) {
      const value = this.values[i]
      switch (this.kinds[i]) {
        case FIELD:
          out += out === '' ? String(value) : `.${String(value)}`
          break
        case INDEX:
          out += `[${String(value)}]`
          break
        default:
          out += `[${JSON.stringify(value)}]`
      }
    }
    return out === '' ? 'body' : out
  }

  private push(kind: number, value: string | number): void {
    this.kinds[this.depth] = kind
    this.values[this.depth] = value
    this.depth++
  }
}
