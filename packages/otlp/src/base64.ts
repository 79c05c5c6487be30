/** True when `s` only has base64 characters (standard or URL-safe alphabet, `=` padding at the end). */
export function isBase64(s: string): boolean {
  let end = s.length
  while (end > 0 && s.charCodeAt(end - 1) === 61) end--
  if (s.length - end > 2 || end % 4 === 1) return false
  if (s.length % 4 !== 0 && end !== s.length) return false // padding only on a full quantum
  for (let i = 0; i < end; i++) {
    const c = s.charCodeAt(i)
    const ok =
      (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 45 || c === 95
    if (!ok) return false
  }
  return true
}

/** Bytes as standard, padded base64 (the form SpanRecord keeps bytesValue in). */
export function bytesToBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
}
