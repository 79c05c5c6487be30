// Why this exists: Postgres cannot store U+0000 in text or jsonb, and its JSON parser refuses the
// escape `\u0000` ("unsupported Unicode escape sequence") and an escaped surrogate without its
// pair ("Unicode low surrogate must follow a high surrogate"). JSON, OTLP and protobuf all allow
// such strings, so ingest accepts them; stored as they are, one such span would fail its whole
// batch with a data exception and send the queue job to the failed set, the other spans with it.
//
// The decision: such a character is stored as U+FFFD REPLACEMENT CHARACTER — what a UTF-8 encoder
// already writes for a lone surrogate — in text and jsonb columns alike, on both storage paths (the
// COPY and the statement path of @tracewell/write-path), so a span reads back the same whichever
// path stored it. Nothing else about the span changes.
//
// Both functions are on the writer's hot path (tens of thousands of ~1.3 KB spans a second):
// text without the offending characters is found by one native scan and returned as it is.

/** `text` with every U+0000 replaced by U+FFFD (lone surrogates become U+FFFD when encoded as UTF-8). */
export function toStorableText(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\ufffd') : text
}

const REPLACEMENT_ESCAPE = '\\ufffd'

/**
 * JSON text with every `\u0000` escape and every escaped lone surrogate replaced by `\ufffd`.
 * Only a real escape counts: `\\u0000` (an escaped backslash, then the letters u0000) stays. An
 * escaped surrogate pair (`\ud83d\ude00`) is well-formed and stays too. Expects well-formed JSON.
 */
export function toStorableJson(json: string): string {
  let at = json.indexOf('\\u')
  if (at === -1) return json
  let storable = ''
  let copied = 0
  while (at !== -1) {
    // The common `\u` escapes (control characters, Python's ensure_ascii text) are not surrogates
    // or U+0000: decided by the first hex digits, before the backslashes are counted.
    const escaped = unstorableEscapeAt(json, at)
    let next = at + 2
    if (escaped !== KEEP && isRealEscape(json, at)) {
      if (escaped === HIGH_SURROGATE && isLowSurrogateEscapeAt(json, at + 6)) {
        next = at + 12
      } else {
        storable += json.slice(copied, at) + REPLACEMENT_ESCAPE
        copied = at + 6
        next = copied
      }
    }
    at = json.indexOf('\\u', next)
  }
  return copied === 0 ? json : storable + json.slice(copied)
}

const KEEP = 0
const NUL = 1
const HIGH_SURROGATE = 2
const LOW_SURROGATE = 3

// `| 0x20` lower-cases an ASCII letter and leaves a digit as it is: hex digits compare as lower case.
const hexAt = (json: string, index: number): number => json.charCodeAt(index) | 0x20

/** What the four hex digits after `\u` at `at` are, as far as Postgres is concerned. */
function unstorableEscapeAt(json: string, at: number): typeof KEEP | typeof NUL | typeof HIGH_SURROGATE | typeof LOW_SURROGATE {
  const first = hexAt(json, at + 2)
  if (first === 0x30 /* 0 */) {
    return hexAt(json, at + 3) === 0x30 && hexAt(json, at + 4) === 0x30 && hexAt(json, at + 5) === 0x30 ? NUL : KEEP
  }
  if (first !== 0x64 /* d */) return KEEP
  const second = hexAt(json, at + 3)
  if (second === 0x38 || second === 0x39 || second === 0x61 || second === 0x62) return HIGH_SURROGATE // 8 9 a b
  if (second >= 0x63 && second <= 0x66) return LOW_SURROGATE // c d e f
  return KEEP
}

function isLowSurrogateEscapeAt(json: string, at: number): boolean {
  // Right after an escape's last hex digit, a backslash always starts a new escape.
  return json.charCodeAt(at) === 0x5c && json.charCodeAt(at + 1) === 0x75 && unstorableEscapeAt(json, at) === LOW_SURROGATE
}

/** Whether the backslash at `at` starts an escape: an even number of backslashes precede it. */
function isRealEscape(json: string, at: number): boolean {
  let before = at - 1
  while (before >= 0 && json.charCodeAt(before) === 0x5c) before--
  return (at - 1 - before) % 2 === 0
}
