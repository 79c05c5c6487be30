// The order groups of equal figures are kept in, wherever the metric engine ranks them in code.

/**
 * Groups of equal totals in code point order, none (null) last: the order the rollups keep their
 * groups in (collate "C", metric-rollups.ts), so that the groups they keep are the ones kept here.
 */
export function byCodePoint(a: string | null, b: string | null): number {
  if (a === b) return 0
  if (a === null || b === null) return a === null ? 1 : -1
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return codePointRank(x) - codePointRank(y)
  }
  return a.length - b.length
}

/** byCodePoint for strings without a unit from U+D800: the engine's own comparison, several times faster. */
export const byUnits = (a: string | null, b: string | null): number => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1)

/** A UTF-16 unit's place in code point order: surrogates (code points from U+10000) after U+E000–U+FFFF. */
const codePointRank = (unit: number): number => (unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit)
