import { SpanValidationError } from './validation-error.ts'

const FIELD = 0
const INDEX = 1
const KEY = 2

/**
 * Where in the body the decoder is, kept as raw segments and rendered to a string only when a
 * validation error is thrown: the success path (almost every request) builds no path strings.
 * Errors are thrown; only the span collector recovers from one, and it unwinds the path itself.
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

  /** How deep the decoder is: a position to come back to after a rejected span. */
  get position(): number {
    return this.depth
  }

  /** Leaves every segment entered since `position` (an error left them entered). */
  backTo(position: number): void {
    this.depth = position
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
