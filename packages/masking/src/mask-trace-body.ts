import type { SpanRecord } from '@tracewell/span-schema'
import { compileRules } from './compile-rules.ts'
import { Masker } from './masker.ts'
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

// A JSON string literal: quotes around characters that are not quotes or backslashes, or escapes.
const STRING_LITERAL = /"(?:[^"\\]|\\.)*"/g

/**
 * The body with every string literal in `changes` (by value) replaced, in one scan of its text, or
 * null if one of them is not found as JSON.stringify writes it. A literal is looked up only when
 * its length is one of theirs, so that the body's keys and ids cost no hashing.
 */
function patchJson(body: Uint8Array, changes: Map<string, string>): Buffer | null {
  const literals = new Map<string, string>()
  const lengths = new Set<number>()
  for (const [original, masked] of changes) {
    const literal = JSON.stringify(original)
    literals.set(literal, JSON.stringify(masked))
    lengths.add(literal.length)
  }
  const found = new Set<string>()
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
  const patched = text.replace(STRING_LITERAL, (literal) => {
    if (!lengths.has(literal.length)) return literal
    const replacement = literals.get(literal)
    if (replacement === undefined) return literal
    found.add(literal)
    return replacement
  })
  return found.size === literals.size ? Buffer.from(patched) : null
}
