// Masking a JSON document in its text, without parsing it: the built-in detectors' matches never
// hold a quote or a backslash, so each lies wholly inside a string literal or wholly outside one
// (a number). Two cases need care, and this handles them:
// - a match that starts on the letter of an escape (`\nbob@example.com`: `nbob@…` looks like an
//   address): the letter stays, the rest is replaced;
// - a match outside any string (a card number written as a JSON number): its replacement is
//   written as a JSON string, so the document stays valid.
// A replacement holding a quote, a backslash or a control character is written escaped.

export class JsonMatchPlacer {
  readonly #text: string
  readonly #replacementInString: string
  readonly #replacementAsValue: string
  /** Offsets where string literals start and end, alternately; computed on the first match outside-or-inside question. */
  #quotes: number[] | null = null

  constructor(text: string, replacement: string) {
    this.#text = text
    this.#replacementAsValue = JSON.stringify(replacement)
    this.#replacementInString = this.#replacementAsValue.slice(1, -1)
  }

  /** The candidate as the detector should judge it: without the letter of an escape it starts on. */
  unescaped(candidate: string, offset: number): string {
    return this.#startsOnEscape(offset) ? candidate.slice(1) : candidate
  }

  /** What a match at `offset` becomes in the document. */
  replacementAt(candidate: string, offset: number): string {
    if (this.#startsOnEscape(offset)) return candidate[0] + this.#replacementInString
    return this.#insideString(offset) ? this.#replacementInString : this.#replacementAsValue
  }

  /** Whether the character at `offset` is escaped by the backslashes before it (an odd number of them). */
  #startsOnEscape(offset: number): boolean {
    let backslashes = 0
    for (let i = offset - 1; i >= 0 && this.#text.charCodeAt(i) === 92; i--) backslashes++
    return backslashes % 2 === 1
  }

  #insideString(offset: number): boolean {
    const quotes = (this.#quotes ??= unescapedQuotes(this.#text))
    // Offsets before the first quote are outside; each quote passed toggles.
    let low = 0
    let high = quotes.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if ((quotes[middle] as number) < offset) low = middle + 1
      else high = middle
    }
    return low % 2 === 1
  }
}

/** Offsets of the quotes that open and close string literals (those not escaped). */
function unescapedQuotes(text: string): number[] {
  const quotes: number[] = []
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (inString && code === 92) i++
    else if (code === 34) {
      quotes.push(i)
      inString = !inString
    }
  }
  return quotes
}
