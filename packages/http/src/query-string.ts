/** A parsed query string: one string per name, or every value in order when a name repeats. */
export type ParsedQuery = Record<string, string | string[]>

// Like fast-querystring's, the result has no Object.prototype in its chain, so `__proto__` or
// `constructor` in a query are ordinary names.
const NullPrototype = function () {} as unknown as new () => ParsedQuery
NullPrototype.prototype = Object.create(null) as object

const plus = 0x2b
const percent = 0x25

function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30
  const lower = code | 0x20
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1
}

/** The byte written as `%XX` at `index`, or -1. */
function escapedByte(text: string, index: number): number {
  if (text.charCodeAt(index) !== percent) return -1
  const high = hexDigit(text.charCodeAt(index + 1))
  const low = hexDigit(text.charCodeAt(index + 2))
  return high < 0 || low < 0 ? -1 : (high << 4) | low
}

/**
 * Form decoding in one pass: `+` is a space and `%XX` sequences are UTF-8 (shortest form, no
 * surrogates, at most U+10FFFF, as `decodeURIComponent` requires). Undefined when a `%` does not
 * start such a sequence.
 */
function decodeForm(text: string): string | undefined {
  let decoded = ''
  let copiedUpTo = 0
  let index = 0
  while (index < text.length) {
    const code = text.charCodeAt(index)
    if (code === plus) {
      decoded += `${text.slice(copiedUpTo, index)} `
      copiedUpTo = ++index
      continue
    }
    if (code !== percent) {
      index++
      continue
    }
    const lead = escapedByte(text, index)
    if (lead < 0) return undefined
    // The UTF-8 sequence a lead byte starts: its length, its payload bits, and the range its second
    // byte must fall in (narrower after E0, ED, F0 and F4, which rules out overlong forms,
    // surrogates and code points above U+10FFFF).
    let length = 1
    let codePoint = lead
    let secondMin = 0x80
    let secondMax = 0xbf
    if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2
      codePoint = lead & 0x1f
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3
      codePoint = lead & 0x0f
      if (lead === 0xe0) secondMin = 0xa0
      if (lead === 0xed) secondMax = 0x9f
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4
      codePoint = lead & 0x07
      if (lead === 0xf0) secondMin = 0x90
      if (lead === 0xf4) secondMax = 0x8f
    } else if (lead >= 0x80) {
      return undefined
    }
    for (let position = 1; position < length; position++) {
      const byte = escapedByte(text, index + 3 * position)
      if (byte < (position === 1 ? secondMin : 0x80) || byte > (position === 1 ? secondMax : 0xbf)) return undefined
      codePoint = (codePoint << 6) | (byte & 0x3f)
    }
    decoded += text.slice(copiedUpTo, index) + String.fromCodePoint(codePoint)
    index += 3 * length
    copiedUpTo = index
  }
  return copiedUpTo === 0 ? text : decoded + text.slice(copiedUpTo)
}

/** A name or value: decoded, or, when it does not decode, as it came with `+` still a space. */
function component(query: string, start: number, end: number): string {
  const text = query.slice(start, end)
  // Most names and many values have nothing to decode; indexOf finds that faster than decodeForm's loop.
  if (text.indexOf('%') === -1 && text.indexOf('+') === -1) return text
  return decodeForm(text) ?? text.replaceAll('+', ' ')
}

/**
 * Fastify's `querystringParser`, giving what its default (fast-querystring) gives — a test holds
 * the two to that — at about half the cost. Decoding dominated parsing (itself the largest cost of
 * a cached GET /api/promptset after the socket write), and fast-querystring decodes in two passes:
 * a regular-expression replace of `+`, then `%XX`. Here both happen in one, and names and values
 * are found with `indexOf`.
 */
export function parseQueryString(query: string): ParsedQuery {
  const result = new NullPrototype()
  let start = 0
  while (start <= query.length) {
    let end = query.indexOf('&', start)
    if (end === -1) end = query.length
    let equals = query.indexOf('=', start)
    if (equals === -1 || equals > end) equals = end
    // `&&` and a trailing `&` give nothing; `=x` is the empty name.
    if (end > start) {
      const name = component(query, start, equals)
      const value = equals < end ? component(query, equals + 1, end) : ''
      const previous = result[name]
      if (previous === undefined) result[name] = value
      else if (typeof previous === 'string') result[name] = [previous, value]
      else previous.push(value)
    }
    start = end + 1
  }
  return result
}
