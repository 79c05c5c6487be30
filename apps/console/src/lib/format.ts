// How numbers and times read in the console: short, aligned, and the same on every page.

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—'
  if (ms < 1) return `${Math.round(ms * 1000)} µs`
  if (ms < 1000) return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`
  const minutes = Math.floor(ms / 60_000)
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`
}

const integer = new Intl.NumberFormat('en-US')
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 })

export function formatCount(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—'
  return Math.abs(value) >= 100_000 ? compact.format(value) : integer.format(value)
}

const dollars = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 })
const cents = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumSignificantDigits: 3 })
const smallestCost = 0.000_001
const exact = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 12 })

/**
 * A cost as people compare them: two decimals from $1 on ($12.50), three significant digits
 * below ($0.0456, $0.000123) but never fewer than two decimals ($0.80), never in exponent form. Below a millionth of a dollar it reads
 * "<$0.000001" (formatCostExact gives the digits, for a tooltip). Every cost on every page.
 */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return '—'
  if (usd === 0) return '$0'
  if (usd > 0 && usd < smallestCost) return '<$0.000001'
  if (Math.abs(usd) >= 1) return dollars.format(usd)
  // Intl cannot combine significant digits with a minimum of decimals: padded here.
  // (0.9996 rounds to "$1", which takes two decimals as any dollar does.)
  const text = cents.format(usd)
  const decimals = text.includes('.') ? text.length - text.indexOf('.') - 1 : -1
  return decimals >= 2 ? text : decimals === -1 ? `${text}.00` : text + '0'.repeat(2 - decimals)
}

/** Every digit of a cost down to a trillionth of a dollar, for a tooltip. */
export function formatCostExact(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return ''
  return exact.format(usd)
}

/** A local date and time to the second, e.g. 2026-01-31 14:05:09. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—'
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
}

/** "3 min ago", for recent times; the date otherwise. */
export function formatAgo(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—'
  const elapsed = now - Date.parse(iso)
  if (!Number.isFinite(elapsed)) return iso
  if (elapsed < 0) return formatTime(iso)
  if (elapsed < 60_000) return `${Math.max(1, Math.round(elapsed / 1000))} s ago`
  if (elapsed < 3_600_000) return `${Math.round(elapsed / 60_000)} min ago`
  if (elapsed < 86_400_000) return `${Math.round(elapsed / 3_600_000)} h ago`
  return formatTime(iso)
}

export const spanKinds = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const

export function spanKindName(kind: number): string {
  return spanKinds[kind] ?? String(kind)
}
