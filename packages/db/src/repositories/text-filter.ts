// The word filter of a trace: what makes full-text search (`q` of the trace list) fast without an
// index on the spans. A GIN index over the spans' text was measured and rejected: it made storing
// a span about ten times dearer (200k spans of ~1 KB: 2.6 s without it, 28 s with it), far beyond
// what the writer can give.
//
// Instead the writer keeps, in each trace's summary, a Bloom filter of the words in its spans'
// attribute values (prompts, completions, every other string). A search hashes its words the same
// way and scans only the summaries whose filter holds them all; the few traces that pass (those
// that have the words, and a fraction of a percent of false positives) are then checked against
// their spans' text. A filter never misses a word it was given, so nothing is lost by skipping.
//
// A word is a maximal run of ASCII letters and digits and of characters above U+007F (accented
// and non-Latin letters; surrogates, and so emoji, separate words), compared lowercased.
//
// Sizes: a trace's filter has 16 bits (rounded up to a power of two, 256 to 65,536) for each
// distinct word, and every word sets PROBES bits, so a word not in the trace passes with a
// probability under 0.3% (about 0.02% after rounding up). Filters of one trace stored by
// different batches may differ in size; their union has the larger size, the smaller repeated to
// fill it (a filter of m bits reads bit position mod m, so a repeated one still holds its words),
// which never loses a word.
// Stored as Postgres varbit, bit i being the i-th from the left.

export const PROBES = 4
const BITS_PER_WORD = 16
const MIN_BITS = 256
const MAX_BITS = 65_536

/** A word's hash: FNV-1a over its lowercased UTF-16 units, kept to 30 bits (a small integer in V8). */
function finishHash(hash: number): number {
  return hash >>> 2
}

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193

/** The second hash of a word, from its first: odd, so that the probes are distinct. */
const stepOf = (hash: number): number => (Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d) >>> 1) | 1

/** Lowercase of a UTF-16 unit below U+0530 (Latin, Greek, Cyrillic, Armenian); others have no case or are kept. */
const lowerTable = (() => {
  const table = new Uint16Array(0x530)
  for (let unit = 0; unit < table.length; unit++) {
    const lower = String.fromCharCode(unit).toLowerCase()
    table[unit] = lower.length === 1 ? lower.charCodeAt(0) : unit
  }
  return table
})()

/** Each ASCII unit's lowercase if it belongs to a word (letters and digits), else 0: one lookup a character. */
const asciiWordUnits = (() => {
  const table = new Uint8Array(0x80)
  for (let unit = 0x30; unit <= 0x39; unit++) table[unit] = unit
  for (let unit = 0x61; unit <= 0x7a; unit++) table[unit] = table[unit - 0x20] = unit
  return table
})()

/**
 * The distinct words of one trace (of the spans a batch brought), to be made into its filter.
 *
 * On the writer's path, so written for it: the tokenizer is a method that inserts each word's hash
 * straight into an open-addressing table of its own (hash + 1; 0 is empty), with no callback per
 * word and no Set (a profile of the writer under bench:ingest put the callback form at 15% of its
 * CPU); and a long text this trace already brought (a system prompt, the chat history that every
 * call of a conversation repeats) is not read again.
 */
export class TextFilterWords {
  #slots = new Int32Array(64)
  #count = 0
  #seenTexts: Set<string> | undefined

  /** Adds the words of a span's attributes: every string inside them (values, not keys), at any depth. */
  addAttributes(value: unknown): void {
    if (typeof value === 'string') this.addText(value)
    else if (Array.isArray(value)) for (const item of value) this.addAttributes(item)
    else if (value !== null && typeof value === 'object') for (const key in value) this.addAttributes((value as Record<string, unknown>)[key])
  }

  /** Adds the words of `text`. */
  addText(text: string): void {
    if (text.length >= REPEATED_TEXT_MIN) {
      this.#seenTexts ??= new Set()
      if (this.#seenTexts.has(text)) return
      this.#seenTexts.add(text)
    }
    let hash = FNV_OFFSET
    let inWord = false
    for (let i = 0; i < text.length; i++) {
      let unit = text.charCodeAt(i)
      if (unit < 0x80) unit = asciiWordUnits[unit] as number
      else if (unit < 0x530) unit = lowerTable[unit] as number
      else if (unit >= 0xd800 && unit <= 0xdfff) unit = 0
      if (unit !== 0) {
        hash = Math.imul(hash ^ unit, FNV_PRIME)
        inWord = true
      } else if (inWord) {
        this.#insert(finishHash(hash))
        hash = FNV_OFFSET
        inWord = false
      }
    }
    if (inWord) this.#insert(finishHash(hash))
  }

  /** The distinct word hashes added. */
  *hashes(): Generator<number> {
    for (const key of this.#slots) if (key !== 0) yield key - 1
  }

  #insert(hash: number): void {
    const key = hash + 1
    const slots = this.#slots
    const mask = slots.length - 1
    let at = (Math.imul(key, 0x9e3779b1) >>> 0) & mask
    for (let held = slots[at]; held !== 0; held = slots[at]) {
      if (held === key) return
      at = (at + 1) & mask
    }
    slots[at] = key
    // Over half full: twice the size, every key placed again.
    if (++this.#count * 2 > slots.length) {
      this.#slots = new Int32Array(slots.length * 2)
      for (const held of slots) if (held !== 0) this.#place(held)
    }
  }

  #place(key: number): void {
    const slots = this.#slots
    const mask = slots.length - 1
    let at = (Math.imul(key, 0x9e3779b1) >>> 0) & mask
    while (slots[at] !== 0) at = (at + 1) & mask
    slots[at] = key
  }

  /** The filter as hexadecimal digits (`x` + these, cast to varbit, is the stored value), or null without words. */
  toHex(): string | null {
    const count = this.#count
    if (count === 0) return null
    let bits = MIN_BITS
    while (bits < count * BITS_PER_WORD && bits < MAX_BITS) bits *= 2
    const bytes = Buffer.alloc(bits / 8)
    const mask = bits - 1
    for (const hash of this.hashes()) {
      const step = stepOf(hash)
      for (let probe = 0; probe < PROBES; probe++) {
        const bit = (hash + probe * step) & mask
        bytes[bit >>> 3] = (bytes[bit >>> 3] as number) | (0x80 >>> (bit & 7))
      }
    }
    return bytes.toString('hex')
  }
}

// Texts this long are remembered per trace, so a repeat is skipped; shorter ones cost less to
// read again than to look up.
const REPEATED_TEXT_MIN = 64

/**
 * The probes a search for `text` checks: for each distinct word, PROBES positions before reduction
 * (a filter of m bits reads bit `position & (m - 1)`). Empty when the text has no word.
 */
export function textFilterProbes(text: string): number[] {
  const words = new TextFilterWords()
  words.addText(text)
  const positions: number[] = []
  for (const hash of words.hashes()) {
    const step = stepOf(hash)
    for (let probe = 0; probe < PROBES; probe++) positions.push(hash + probe * step)
  }
  return positions
}
