import { randomBytes } from 'node:crypto'

// Why this exists: V8's JSON.parse (every Node 24 release up to at least 24.21) can return the
// wrong key for an object key written with an escape sequence. Once some object got a key with a
// backslash in it (`"a\\"`), a later key of the same decoded length written with another escape
// (`"a\t"`, `"a\""`, `"a\u001c"`) comes back as that earlier key — in this parse or any later
// one in the process, depending on the hash seed and on what the process parsed before. Keys
// without escapes are never affected, and string *values* never are. So: plain JSON.parse when
// no key holds a backslash (the usual case, checked by an indexOf scan costing about a fifth of
// the parse), and otherwise a parse in which those keys are swapped for placeholders and
// restored afterwards.

/** JSON.parse's reviver, with the source text of primitive values (Node 24: JSON.parse source text access). */
export type JsonReviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown

/**
 * JSON.parse, with object keys written with escape sequences decoded correctly. A reviver sees
 * placeholders instead of those (rare) keys.
 */
export function parseJsonText(text: string, reviver?: JsonReviver): unknown {
  const parse = (json: string): unknown => (reviver === undefined ? JSON.parse(json) : JSON.parse(json, reviver as Parameters<typeof JSON.parse>[1]))
  if (!mayHaveKeyWithBackslash(text)) return parse(text)
  // Validate first, so that malformed text fails exactly as JSON.parse reports it (and the scan
  // below may assume well-formed JSON).
  const parsed: unknown = parse(text)
  const keys = escapedKeys(text)
  if (keys.length === 0) return parsed
  return parseWithPlaceholders(text, keys, parse)
}

/**
 * Whether some string containing a backslash is followed by a colon (is an object key). Exact for
 * well-formed JSON; for anything else JSON.parse will throw whatever the answer. Jumps from
 * backslash to backslash with indexOf, so text without escapes costs almost nothing.
 */
function mayHaveKeyWithBackslash(text: string): boolean {
  for (let backslash = text.indexOf('\\'); backslash !== -1; ) {
    const close = closingQuote(text, backslash + 1)
    if (close === -1) return false
    if (isFollowedByColon(text, close + 1)) return true
    backslash = text.indexOf('\\', close + 1)
  }
  return false
}

interface EscapedKey {
  /** Index of the opening quote. */
  start: number
  /** Index after the closing quote. */
  end: number
}

/** Every object key containing a backslash, in well-formed JSON text. */
function escapedKeys(text: string): EscapedKey[] {
  const keys: EscapedKey[] = []
  // Outside strings, well-formed JSON has no quote characters, so quotes delimit the strings.
  let backslash = text.indexOf('\\')
  for (let open = text.indexOf('"'); open !== -1 && backslash !== -1; ) {
    const close = closingQuote(text, open + 1)
    if (backslash < close) {
      if (isFollowedByColon(text, close + 1)) keys.push({ start: open, end: close + 1 })
      backslash = text.indexOf('\\', close + 1)
    }
    open = text.indexOf('"', close + 1)
  }
  return keys
}

/**
 * The first quote at or after `from` that is not escaped, or -1. Inside a string a run of
 * backslashes starts at an escape boundary, so an even run before a quote leaves it unescaped.
 */
function closingQuote(text: string, from: number): number {
  for (let quote = text.indexOf('"', from); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++
    if (backslashes % 2 === 0) return quote
  }
  return -1
}

function isFollowedByColon(text: string, from: number): boolean {
  let i = from
  while (i < text.length && isJsonWhitespace(text.charCodeAt(i))) i++
  return text.charCodeAt(i) === 0x3a
}

const isJsonWhitespace = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d

function parseWithPlaceholders(text: string, keys: EscapedKey[], parse: (json: string) => unknown): unknown {
  const prefix = unusedPrefix(text)
  const originals: string[] = []
  let rewritten = ''
  let copiedUpTo = 0
  for (const key of keys) {
    // A lone string is a value, not a key: JSON.parse decodes it correctly.
    originals.push(JSON.parse(text.slice(key.start, key.end)) as string)
    rewritten += `${text.slice(copiedUpTo, key.start)}"${prefix}${originals.length - 1}"`
    copiedUpTo = key.end
  }
  rewritten += text.slice(copiedUpTo)
  return restoreKeys(parse(rewritten), prefix, originals)
}

/** A key prefix that occurs nowhere in the text, so no real key can be mistaken for a placeholder. */
function unusedPrefix(text: string): string {
  for (;;) {
    const prefix = `tracewell-key-${randomBytes(8).toString('hex')}-`
    if (!text.includes(prefix)) return prefix
  }
}

function restoreKeys(value: unknown, prefix: string, originals: string[]): unknown {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = restoreKeys(value[i], prefix, originals)
    return value
  }
  if (value === null || typeof value !== 'object') return value
  const object = value as Record<string, unknown>
  let hasPlaceholder = false
  for (const key of Object.keys(object)) {
    const child = object[key]
    const restoredChild = restoreKeys(child, prefix, originals)
    if (restoredChild !== child) defineKey(object, key, restoredChild)
    if (key.startsWith(prefix)) hasPlaceholder = true
  }
  if (!hasPlaceholder) return object
  // Rebuilt in the original order; defining an existing key again keeps its place and takes the
  // later value, as JSON.parse does with duplicate keys.
  const restored: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(object)) {
    const realKey = key.startsWith(prefix) ? (originals[Number(key.slice(prefix.length))] as string) : key
    defineKey(restored, realKey, child)
  }
  return restored
}

/** `object[key] = value`, except that `__proto__` stays an ordinary own key (as JSON.parse makes it). */
function defineKey(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true })
}
