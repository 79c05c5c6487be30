import type { SpanRecord } from '@tracewell/span-schema'
import { compileRules } from './compile-rules.ts'
import { Masker, type MaskedString } from './masker.ts'
import type { MaskingRule } from './masking-rule.schema.ts'
import { encodeOtlpJson } from './otlp-json.encoder.ts'

/** A masker for rules already validated (stored by the API, or checked at boot). */
export function maskerOf(rules: readonly MaskingRule[]): Masker {
  return new Masker(compileRules(rules, 'rules'))
}

/** A body to queue in place of the one received, and its format. */
export interface MaskedBody {
  body: Buffer
  format: 'json'
}

/**
 * Masks a request's decoded spans in place and answers the body to queue instead of the one
 * received, or null when no rule matched anything and the original bytes can go as they came.
 *
 * A JSON body is the body itself with each string literal that was masked replaced (patchJson),
 * where writing every span again would cost as much as decoding it did.
 * A protobuf body, or a JSON body whose literals are spelled otherwise than JSON.stringify
 * spells them (`\/`, `\u00e9`), or whose values the span limits cut, is written again as OTLP/JSON.
 */
export function maskTraceBody(body: Uint8Array, format: 'json' | 'protobuf', spans: readonly SpanRecord[], masker: Masker): MaskedBody | null {
  const changes = masker.maskSpans(spans)
  if (changes.size === 0) return null
  const patched = format === 'json' ? patchJson(body, changes) : null
  return { body: patched ?? encodeOtlpJson(spans), format: 'json' }
}

interface WantedLiteral {
  literal: Buffer
  replacement: Buffer
  /** Occurrences the spans held, and found so far. */
  count: number
  found: number
}

/**
 * The body with every string literal in `changes` (by value) replaced, or null if one of them is
 * found fewer times than the spans held it (spelled otherwise than JSON.stringify spells it).
 * The result is the body's own bytes between the replacements, never decoded to text and
 * encoded again.
 */
function patchJson(body: Uint8Array, changes: Map<string, MaskedString>): Buffer | null {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  const wanted: WantedLiteral[] = []
  for (const [original, { masked, count, ambiguous }] of changes) {
    if (ambiguous) return null
    wanted.push({ literal: Buffer.from(JSON.stringify(original)), replacement: Buffer.from(JSON.stringify(masked)), count, found: 0 })
  }
  const searched = wanted.every((entry) => holdsTextOnlyStringsCan(entry.literal)) ? literalsSearched(bytes, wanted) : null
  const hits = searched ?? literalsScanned(bytes, wanted)
  // A literal found more often than the spans held it stood elsewhere too (a key, an attribute no
  // rule applies to): masked there as well, it is no worse.
  if (wanted.some((entry) => entry.found < entry.count)) return null
  const pieces: Buffer[] = []
  let copiedTo = 0
  for (const { at, entry } of hits) {
    pieces.push(bytes.subarray(copiedTo, at), entry.replacement)
    copiedTo = at + entry.literal.length
  }
  pieces.push(bytes.subarray(copiedTo))
  return Buffer.concat(pieces)
}

interface Hit {
  at: number
  entry: WantedLiteral
}

/**
 * Where each literal stands, found by a native search, in body order; null when the literals need too many searches. What is searched is a few
 * bytes from where the literal's masked version first differs (the match): spans written from one
 * template share their prompts' first and last hundreds of bytes, which a search for the whole
 * literal would compare again at every span, and literals that hold the same match (a customer's
 * address in every prompt of a trace) share one search. Only for literals with a byte that valid
 * JSON has nowhere outside a string (holdsTextOnlyStringsCan): a found quote that is not escaped
 * then opens a string, since text after a closing quote is JSON's syntax up to the next quote, and
 * the literal, its escapes complete, ends at its own last quote.
 */
function literalsSearched(bytes: Buffer, wanted: readonly WantedLiteral[]): Hit[] | null {
  const byNeedle = new Map<string, NeedleSharers>()
  for (const entry of wanted) {
    const skipped = sharedPrefixLength(entry.literal, entry.replacement)
    const needle = entry.literal.toString('latin1', skipped, skipped + NEEDLE_BYTES)
    let sharers = byNeedle.get(needle)
    if (sharers === undefined) byNeedle.set(needle, (sharers = { shapes: new Map(), byText: new Map() }))
    sharers.shapes.set(`${skipped}:${entry.literal.length}`, { skipped, length: entry.literal.length })
    sharers.byText.set(entry.literal.toString('latin1'), entry)
  }
  // A search a needle is a pass over the body (a fast one): past a few, one scan for all is cheaper.
  if (byNeedle.size > SEARCHED_NEEDLES_AT_MOST) return null
  const hits: Hit[] = []
  for (const [needle, { shapes, byText }] of byNeedle) {
    for (let found = bytes.indexOf(needle, 0, 'latin1'); found !== -1; found = bytes.indexOf(needle, found + 1, 'latin1')) {
      for (const { skipped, length } of shapes.values()) {
        const at = found - skipped
        if (at < 0 || at + length > bytes.length) continue
        // Looked up by its text: a trace's masked prompts often share the needle, and their length.
        const entry = byText.get(bytes.toString('latin1', at, at + length))
        // A quote after an odd run of backslashes is inside another string.
        if (entry === undefined || isEscaped(bytes, at)) continue
        hits.push({ at, entry })
        entry.found++
        break
      }
    }
  }
  // Two literals never overlap: each starts on a quote that opens a string and ends on the one that closes it.
  return hits.sort((a, b) => a.at - b.at)
}

/** The literals searched by one needle: where the needle stands in them, and the literals by their bytes (as latin1 text). */
interface NeedleSharers {
  shapes: Map<string, { skipped: number; length: number }>
  byText: Map<string, WantedLiteral>
}

const NEEDLE_BYTES = 16
const SEARCHED_NEEDLES_AT_MOST = 16

function sharedPrefixLength(a: Buffer, b: Buffer): number {
  let length = 0
  while (length < a.length && length < b.length && a[length] === b[length]) length++
  return length
}

function isEscaped(bytes: Buffer, at: number): boolean {
  let backslashes = 0
  for (let i = at - 1; i >= 0 && bytes[i] === BACKSLASH; i--) backslashes++
  return backslashes % 2 === 1
}

/**
 * Whether the literal's text (between its quotes) has a byte JSON allows only inside a string:
 * anything but whitespace, the punctuation, numbers, true, false and null. A masked prompt, an
 * email has one; a bare phone number or address may not, and is found by literalsScanned.
 */
function holdsTextOnlyStringsCan(literal: Buffer): boolean {
  for (let i = 1; i < literal.length - 1; i++) if (!JSON_SYNTAX_BYTES[literal[i] as number]) return true
  return false
}

const JSON_SYNTAX_BYTES = new Uint8Array(256)
for (const char of ' \t\n\r{}[]:,0123456789-+.eEtrufalsn') JSON_SYNTAX_BYTES[char.charCodeAt(0)] = 1

/**
 * Where each literal stands, by one pass over the bytes that finds every string literal (a quote,
 * then escapes skipped, to the next quote); only a literal of a length some change has is
 * compared, so the body's keys, ids and other values cost a byte each.
 */
function literalsScanned(bytes: Buffer, wanted: readonly WantedLiteral[]): Hit[] {
  const byLength = new Map<number, WantedLiteral[]>()
  for (const entry of wanted) {
    const sameLength = byLength.get(entry.literal.length)
    if (sameLength === undefined) byLength.set(entry.literal.length, [entry])
    else sameLength.push(entry)
  }
  const hits: Hit[] = []
  let opened = -1
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]
    if (opened === -1) {
      if (byte === QUOTE) opened = i
    } else if (byte === BACKSLASH) {
      i++
    } else if (byte === QUOTE) {
      const candidates = byLength.get(i + 1 - opened)
      if (candidates !== undefined) {
        for (const candidate of candidates) {
          if (bytes.compare(candidate.literal, 0, candidate.literal.length, opened, i + 1) !== 0) continue
          hits.push({ at: opened, entry: candidate })
          candidate.found++
          break
        }
      }
      opened = -1
    }
  }
  return hits
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
