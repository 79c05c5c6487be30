import type { AnyValue, AttributeMap } from './span-record.ts'

/**
 * Deepest allowed nesting of arrayValue/kvlistValue. Real attributes nest a level or two; the
 * bound turns a hostile body into a 400 instead of a stack overflow.
 */
export const MAX_ANY_VALUE_DEPTH = 32

/** Sets `map[key]`, also for the key `__proto__`, which plain assignment would treat as the prototype. */
export function setAttribute(map: AttributeMap, key: string, value: AnyValue): void {
  if (key === '__proto__') {
    Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    map[key] = value
  }
}
