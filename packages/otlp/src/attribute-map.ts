import type { AnyValue, AttributeMap } from './span-record.ts'

/**
 * Deepest allowed nesting of arrayValue/kvlistValue. Real attributes nest a level or two; the
 * bound turns a hostile body into a 400 instead of a stack overflow.
 */
export const MAX_ANY_VALUE_DEPTH = 32

// Attribute names in the OTLP list form arrive as JSON string *values*, which V8 does not
// internalize as it does object keys: every `map[key] = value` with such a string first looks it
// up in V8's string table, about two thirds of the cost of the store. The spans of a batch repeat
// the same names, usually in the same order, so a small table remembers the name last seen in
// each slot; a name found there is an already-internalized string, reached by a plain comparison.
// The slot comes from the name's position in its list, its length and two of its characters
// (hashing every character would cost about as much as the lookup it saves); names that land on
// the same slot only fall back to the plain store.
const REMEMBERED_KEY_SLOTS = 1024
/** Longer names are not remembered, so the table never holds on to more than a few hundred KiB. */
const MAX_REMEMBERED_KEY_LENGTH = 128
const rememberedKeys: string[] = new Array<string>(REMEMBERED_KEY_SLOTS).fill('')

/** `key`, or an equal string already used as a property key; `position` is its index in its list. */
export function internedKey(key: string, position: number): string {
  const length = key.length
  if (length === 0 || length > MAX_REMEMBERED_KEY_LENGTH) return key
  const mixed = (position << 16) ^ (length << 8) ^ (key.charCodeAt(length >> 1) << 4) ^ key.charCodeAt(length - 1)
  const slot = Math.imul(mixed, 0x9e3779b1) >>> 22 // the top 10 bits: REMEMBERED_KEY_SLOTS
  const remembered = rememberedKeys[slot] as string
  if (remembered === key) return remembered
  rememberedKeys[slot] = key
  return key
}

/** Sets `map[key]`, also for the key `__proto__`, which plain assignment would treat as the prototype. */
export function setAttribute(map: AttributeMap, key: string, value: AnyValue): void {
  if (key === '__proto__') {
    Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    map[key] = value
  }
}
