/**
 * A JSON array's text built element by element as UTF-8 bytes outside V8's heap. A combined COPY's
 * trace deltas are held until it commits, up to 5,000 traces a COPY and two COPYs in flight: as
 * objects they outlived the young generation and were copied and promoted by every scavenge,
 * the largest share of the writer's garbage collection (docs/benchmarks.md). As bytes here they
 * cost the collector nothing.
 */
export class JsonArrayBytes {
  #buffer = Buffer.allocUnsafeSlow(INITIAL_BYTES)
  /** After the opening bracket. */
  #at = 1
  #count = 0

  constructor() {
    this.#buffer[0] = OPEN
  }

  /** Elements pushed. */
  get count(): number {
    return this.#count
  }

  /** Appends an element given as JSON text. */
  push(json: string): void {
    // A comma, the text (at most three bytes a UTF-16 unit) and the closing bracket.
    const needed = this.#at + 2 + json.length * 3
    if (needed > this.#buffer.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(needed, this.#buffer.length * 2))
      this.#buffer.copy(grown, 0, 0, this.#at)
      this.#buffer = grown
    }
    if (this.#count > 0) this.#buffer[this.#at++] = COMMA
    this.#at += this.#buffer.write(json, this.#at)
    this.#count++
  }

  /** The array's text; a view of the bytes, valid until the next push. */
  bytes(): Buffer {
    this.#buffer[this.#at] = CLOSE
    return this.#buffer.subarray(0, this.#at + 1)
  }
}

const INITIAL_BYTES = 16 * 1024
const OPEN = 0x5b
const CLOSE = 0x5d
const COMMA = 0x2c
