import { PROBES, stepOf } from './text-filter.ts'

// The word filter of a block of time: the words of every trace of a project that started in the
// same ten minutes. Full-text search reads these first, one row a block (4,320 over 30 days,
// however many traces they hold), and then the trace filters of only the blocks that may hold
// every word; reading every trace's filter grew with the traces
// (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
//
// Made by the summariser from the words' hashes (a summary delta carries them), not by OR-ing the
// traces' filters: those are sized by each trace's own words, and repeated to a block's size they
// would fill it. A block's size is chosen when it is made, from the words its project's previous
// block held, and never changes (a filter cannot be resized without its words): a block that gets
// far more words than its predecessor passes more words it does not hold, which costs the search
// time, never an answer, since the trace filters and the spans' text decide.
//
// The same hashes and probe positions as a trace's filter (text-filter.ts), so a search's probes
// serve both; stored as varbit, bit i the i-th from the left.

/** A block's length: ten minutes, from the Unix epoch (as Postgres's date_bin from 2000-01-01). */
export const TEXT_BLOCK_MS = 600_000

/** The start of the block holding an instant, in milliseconds since the epoch. */
export const textBlockOf = (epochMs: number): number => Math.floor(epochMs / TEXT_BLOCK_MS) * TEXT_BLOCK_MS

/** Bits a word: with PROBES = 4, a word the block does not hold passes about 1.2% of the time. */
const BITS_PER_WORD = 10
const MIN_BITS = 1_024
/** 128 KiB: a block whose project keeps growing stops growing here (its false positives rise). */
const MAX_BITS = 1 << 20

/** The size of a new block's filter for this many words (a power of two, with room to spare). */
export function blockFilterBits(expectedWords: number): number {
  let bits = MIN_BITS
  while (bits < expectedWords * BITS_PER_WORD && bits < MAX_BITS) bits *= 2
  return bits
}

export class BlockFilter {
  readonly #bytes: Buffer
  readonly #mask: number
  #words: number

  /** The filter's bytes, and how many words it was given. */
  private constructor(bytes: Buffer, words: number) {
    this.#bytes = bytes
    this.#mask = bytes.length * 8 - 1
    this.#words = words
  }

  static empty(bits: number): BlockFilter {
    return new BlockFilter(Buffer.alloc(bits / 8), 0)
  }

  /** A stored filter (`hex`: as hexadecimal digits) that was given `words` words. */
  static fromHex(hex: string, words: number): BlockFilter {
    return new BlockFilter(Buffer.from(hex, 'hex'), words)
  }

  /** A stored filter read as varbit text (`0` and `1` digits) that was given `words` words. */
  static fromBitText(bits: string, words: number): BlockFilter {
    const bytes = Buffer.alloc(bits.length / 8)
    for (let i = 0; i < bits.length; i++) if (bits.charCodeAt(i) === 0x31) bytes[i >>> 3] = (bytes[i >>> 3] as number) | (0x80 >>> (i & 7))
    return new BlockFilter(bytes, words)
  }

  /** Words added that it did not (seem to) hold already: what sizes the project's next block. */
  get words(): number {
    return this.#words
  }

  /** Adds a word by its hash (TextFilterWords.hashes); a word it seems to hold already is not counted again. */
  add(hash: number): void {
    const step = stepOf(hash)
    let added = false
    for (let probe = 0; probe < PROBES; probe++) {
      const bit = (hash + probe * step) & this.#mask
      const mask = 0x80 >>> (bit & 7)
      const byte = this.#bytes[bit >>> 3] as number
      if ((byte & mask) === 0) {
        this.#bytes[bit >>> 3] = byte | mask
        added = true
      }
    }
    if (added) this.#words++
  }

  /** Whether it may hold the word of this hash (false: it surely does not). */
  has(hash: number): boolean {
    const step = stepOf(hash)
    for (let probe = 0; probe < PROBES; probe++) {
      const bit = (hash + probe * step) & this.#mask
      if (((this.#bytes[bit >>> 3] as number) & (0x80 >>> (bit & 7))) === 0) return false
    }
    return true
  }

  toHex(): string {
    return this.#bytes.toString('hex')
  }
}
