import { UnsupportedMediaTypeError } from './errors.ts'

/**
 * The `charset` parameter of a Content-Type, lowercased and unquoted, or undefined without one.
 * `application/json; charset="UTF-8"` → `utf-8`.
 */
export function charsetOf(contentType: string): string | undefined {
  const match = /;\s*charset\s*=\s*("([^"]*)"|[^;\s]*)/i.exec(contentType)
  if (match === null) return undefined
  return (match[2] ?? match[1] ?? '').trim().toLowerCase()
}

/**
 * JSON is UTF-8 (RFC 8259 §8.1), and this service reads it as such: a body declared in another
 * character set (`charset=utf-16`) would be read as UTF-8 and stored as what was never sent, so
 * it is refused with a 415 naming the charset instead. No charset, or `utf-8`/`utf8`, is fine.
 */
export function requireUtf8Json(contentType: string): void {
  const charset = charsetOf(contentType)
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return
  throw new UnsupportedMediaTypeError(`Unsupported charset '${charset}' in Content-Type; JSON bodies must be UTF-8 (charset=utf-8 or none)`)
}
