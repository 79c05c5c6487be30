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
 * A JSON body is the body itself with each string literal that was masked replaced (patchJson):
 * one scan of its text, where writing every span again would cost as much as decoding it did.
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
 * found fewer times than the spans held it (spelled otherwise than JSON.stringify spells it). One pass over the bytes finds every literal (a quote,
 * then escapes skipped, to the next quote); only a literal of a length some change has is
 * compared, so the body's keys, ids and other values cost a byte each. The result is the body's
 * own bytes between the replacements, never decoded to text and encoded again.
 */
function patchJson(body: Uint8Array, changes: Map<string, MaskedString>): Buffer | null {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  const byLength = new Map<number, WantedLiteral[]>()
  const wanted: WantedLiteral[] = []
  for (const [original, { masked, count, ambiguous }] of changes) {
    if (ambiguous) return null
    const entry = { literal: Buffer.from(JSON.stringify(original)), replacement: Buffer.from(JSON.stringify(masked)), count, found: 0 }
    wanted.push(entry)
    const sameLength = byLength.get(entry.literal.length)
    if (sameLength === undefined) byLength.set(entry.literal.length, [entry])
    else sameLength.push(entry)
  }
  const pieces: Buffer[] = []
  let copiedTo = 0
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
          pieces.push(bytes.subarray(copiedTo, opened), candidate.replacement)
          copiedTo = i + 1
          candidate.found++
          break
        }
      }
      opened = -1
    }
  }
  // A literal found more often than the spans held it stood elsewhere too (a key, an attribute no
  // rule applies to): masked there as well, it is no worse.
  if (wanted.some((entry) => entry.found < entry.count)) return null
  pieces.push(bytes.subarray(copiedTo))
  return Buffer.concat(pieces)
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
