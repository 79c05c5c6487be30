// The word filter of a trace: what makes full-text search (`q` of the trace list) fast without an
// index on the spans. A GIN index over the spans' text was measured and rejected: it made storing
// a span about ten times dearer (200k spans of ~1 KB: 2.6 s without it, 28 s with it), far beyond
// what the writer can give.
//
// Instead the writer keeps, in each trace's summary, a Bloom filter of the words in its spans'
// attributes, read from their JSON text (prompts, completions, every other value, and the keys).
// A search hashes its words the same way and scans only the summaries whose filter holds them
// all; the few traces that pass (those that have the words, and a fraction of a percent of false
// positives) are then checked against their spans' text. A filter never misses a word it was
// given, so nothing is lost by skipping.
//
// A word is a maximal run of ASCII letters and digits and of characters above U+007F (accented
// and non-Latin letters; characters outside the Basic Multilingual Plane, such as emoji, separate
// words), compared lowercased; a JSON escape (`\n`, `\"`, `\u0001`) separates words too, as the
// characters JSON escapes are all punctuation or control characters.
//
// The text is read as UTF-8 bytes of JSON: on the writer's path, the very bytes of the attributes
// in the binary COPY it sends (no second walk over the attribute objects, no string reads: the
// walk over the decoded values was a large share of the writer's CPU, docs/benchmarks.md#figures-behind-code-comments-2026-12-06);
// elsewhere the JSON text encoded as UTF-8. A search reads its text as a JSON string.
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

// As a signed 32-bit integer (the same bits): a small integer to V8, where 0x811c9dc5 would be a double.
const FNV_OFFSET = 0x811c9dc5 | 0
const FNV_PRIME = 0x01000193

/** The second hash of a word, from its first: odd, so that the probes are distinct. */
export const stepOf = (hash: number): number => (Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d) >>> 1) | 1

/** Lowercase of a code point below U+0530 (Latin, Greek, Cyrillic, Armenian); others have no case or are kept. */
const lowerTable = (() => {
  const table = new Uint16Array(0x530)
  for (let unit = 0; unit < table.length; unit++) {
    const lower = String.fromCharCode(unit).toLowerCase()
    table[unit] = lower.length === 1 ? lower.charCodeAt(0) : unit
  }
  return table
})()

/** Each ASCII byte's lowercase if it belongs to a word (letters and digits), else 0: one lookup a byte. */
const asciiWordBytes = (() => {
  const table = new Uint8Array(0x80)
  for (let byte = 0x30; byte <= 0x39; byte++) table[byte] = byte
  for (let byte = 0x61; byte <= 0x7a; byte++) table[byte] = table[byte - 0x20] = byte
  return table
})()

const PRESIZE_MAX_WORDS = 4096
const MIN_SLOTS = 64
/** The table of a TextFilterWords that has no word yet: it allocates its own once it knows how many to expect. */
const NO_SLOTS = new Int32Array(0)
const BACKSLASH = 0x5c
const LETTER_U = 0x75

/**
 * The distinct words of one trace (of the spans a batch brought), to be made into its filter. On
 * the writer's path, so the tokenizer inserts each word's hash straight into an open-addressing
 * table of its own (hash + 1; 0 is empty): no callback per word, no Set.
 */
export class TextFilterWords {
  // Allocated on the first word, sized for what is being added: a trace's words come as one span's
  // text or one delta's hashes, and a table made at 64 slots and then made again at its size was
  // two typed arrays a trace (off the V8 heap, each with its own backing store), a visible share of
  // the fold's CPU (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
  #slots = NO_SLOTS
  #count = 0
  /**
   * Hashes given to a filter that had none (addHashes), kept as they are until more come: already
   * distinct, they need no table. Most traces' words reach the fold as one delta's hashes, and
   * placing them in a table only to read them out again was a share of the fold's CPU
   * (docs/benchmarks.md, "The word filters' typed arrays").
   */
  #given: Uint32Array | null = null

  /**
   * Adds the words of JSON text given as UTF-8 bytes (`bytes[start]` to `bytes[end - 1]`), such as a
   * span's attributes. Expects well-formed UTF-8, as Buffer.write and Postgres produce.
   */
  addJson(bytes: Uint8Array, start = 0, end = bytes.length): void {
    if (this.#given !== null) this.#placeGiven()
    // Sized for the text at once (about a word in eight bytes of an LLM span's attributes), so
    // that a span's words are not placed two or three times over as the table doubles; a long
    // text repeats its words, and grows the table as it finds them.
    if (this.#count === 0) this.#reserve(Math.min((end - start) >>> 3, PRESIZE_MAX_WORDS))
    let hash = FNV_OFFSET
    let inWord = false
    let i = start
    while (i < end) {
      const byte = bytes[i++] as number
      let unit: number
      if (byte < 0x80) {
        unit = asciiWordBytes[byte] as number
        // An escape is a separator, its letters too (`\u` and four hex digits, or one character).
        if (byte === BACKSLASH) i += bytes[i] === LETTER_U ? 5 : 1
      } else if (byte < 0xe0) {
        // Two bytes: U+0080 to U+07FF, lowercased where it has case.
        const point = ((byte & 0x1f) << 6) | ((bytes[i++] as number) & 0x3f)
        unit = point < 0x530 ? (lowerTable[point] as number) : point
      } else if (byte < 0xf0) {
        // Three bytes: the rest of the Basic Multilingual Plane, as it is.
        unit = ((byte & 0x0f) << 12) | (((bytes[i] as number) & 0x3f) << 6) | ((bytes[i + 1] as number) & 0x3f)
        i += 2
      } else {
        // Four bytes: outside the Basic Multilingual Plane (emoji): a separator.
        unit = 0
        i += 3
      }
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

  /** Adds distinct word hashes (of hashes(), or of hashesOfBase64's text), which it may keep: they are not to be changed. */
  addHashes(hashes: Uint32Array): void {
    if (this.#count === 0 && this.#given === null) {
      if (hashes.length > 0) this.#given = hashes
      return
    }
    if (this.#given !== null) this.#placeGiven()
    this.#insertAll(hashes)
  }

  /** How many distinct words were added. */
  get size(): number {
    return this.#given === null ? this.#count : this.#given.length
  }

  /**
   * The distinct words' hashes as base64 (four bytes each, little-endian), or null without words:
   * how a summary delta carries them to the fold, which adds them to the trace's filter and to its
   * block's (block-filter.ts).
   */
  toBase64(): string | null {
    if (this.size === 0) return null
    const hashes = this.hashes()
    return Buffer.from(hashes.buffer, hashes.byteOffset, hashes.byteLength).toString('base64')
  }

  /** The hashes toBase64 wrote. */
  static hashesOfBase64(text: string): Uint32Array {
    const bytes = Buffer.from(text, 'base64')
    const hashes = new Uint32Array(bytes.length / 4)
    for (let i = 0; i < hashes.length; i++) hashes[i] = bytes.readUInt32LE(i * 4)
    return hashes
  }

  /**
   * The distinct word hashes added, not to be changed. An array, not a generator: the fold asks for
   * every trace's hashes two or three times, and a generator's resumptions showed in its thread's
   * profile (docs/benchmarks.md#figures-behind-code-comments-2026-12-06). Read by index, here and
   * wherever it is hot: a for-of over a typed array took three times as long in V8.
   */
  hashes(): Uint32Array {
    if (this.#given !== null) return this.#given
    const hashes = new Uint32Array(this.#count)
    const slots = this.#slots
    let at = 0
    for (let i = 0; i < slots.length; i++) {
      const key = slots[i] as number
      if (key !== 0) hashes[at++] = key - 1
    }
    return hashes
  }

  /** Places the hashes addHashes kept in a table, as more words are coming. */
  #placeGiven(): void {
    const given = this.#given as Uint32Array
    this.#given = null
    this.#insertAll(given)
  }

  #insertAll(hashes: Uint32Array): void {
    this.#reserve(hashes.length)
    for (let i = 0; i < hashes.length; i++) this.#insert(hashes[i] as number)
  }

  /** Makes room for `words` more words (keeping the table under half full), so that adding them does not grow it step by step. */
  #reserve(words: number): void {
    const needed = (this.#count + words) * 2
    let slots = Math.max(this.#slots.length, MIN_SLOTS)
    while (slots < needed) slots *= 2
    if (slots !== this.#slots.length) this.#resize(slots)
  }

  /** A table of `slots` slots holding the keys placed so far. */
  #resize(slots: number): void {
    const held = this.#slots
    this.#slots = new Int32Array(slots)
    for (let i = 0; i < held.length; i++) {
      const key = held[i] as number
      if (key !== 0) this.#place(key)
    }
  }

  /** Places a hash; the table was made by #reserve, which addJson and addHashes call first. */
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
    if (++this.#count * 2 > slots.length) this.#resize(slots.length * 2)
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
    return this.toBytes()?.toString('hex') ?? null
  }

  /** The filter's bits, first bit in the high bit of the first byte (varbit's order), or null without words. */
  toBytes(): Buffer | null {
    const count = this.size
    if (count === 0) return null
    let bits = MIN_BITS
    while (bits < count * BITS_PER_WORD && bits < MAX_BITS) bits *= 2
    const bytes = Buffer.alloc(bits / 8)
    const mask = bits - 1
    const hashes = this.hashes()
    for (let i = 0; i < hashes.length; i++) {
      const hash = hashes[i] as number
      const step = stepOf(hash)
      for (let probe = 0; probe < PROBES; probe++) {
        const bit = (hash + probe * step) & mask
        bytes[bit >>> 3] = (bytes[bit >>> 3] as number) | (0x80 >>> (bit & 7))
      }
    }
    return bytes
  }
}

/**
 * The probes a search for `text` checks: for each distinct word, PROBES positions before reduction
 * (a filter of m bits reads bit `position & (m - 1)`). Empty when the text has no word.
 */
export function textFilterProbes(text: string): number[] {
  const words = new TextFilterWords()
  // As a JSON string, as the attributes hold it: a backslash in it is an escape there too.
  words.addJson(Buffer.from(JSON.stringify(text)))
  const positions: number[] = []
  for (const hash of words.hashes()) {
    const step = stepOf(hash)
    for (let probe = 0; probe < PROBES; probe++) positions.push(hash + probe * step)
  }
  return positions
}
