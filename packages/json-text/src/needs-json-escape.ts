// The characters JSON.stringify writes as escape sequences: quote, backslash, control characters
// and lone surrogates (well-formed JSON.stringify escapes those too).
// eslint-disable-next-line no-control-regex -- control characters are exactly what is looked for
const escapedByStringify = /["\\\u0000-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** Whether JSON.stringify would write `text` with an escape sequence. */
export function needsJsonEscape(text: string): boolean {
  return escapedByStringify.test(text)
}
