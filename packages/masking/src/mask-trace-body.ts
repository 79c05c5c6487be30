import type { SpanRecord } from '@tracewell/span-schema'
import { compileRules } from './compile-rules.ts'
import { Masker } from './masker.ts'
import type { MaskingRule } from './masking-rule.schema.ts'
import { encodeOtlpJson } from './otlp-json.encoder.ts'

/** A masker for rules already validated (stored by the API, or checked at boot). */
export function maskerOf(rules: readonly MaskingRule[]): Masker {
  return new Masker(compileRules(rules, 'rules'))
}

/**
 * Masks a request's decoded spans in place and answers the body to queue instead of the one
 * received (OTLP/JSON), or null when no rule matched anything and the original bytes can go as
 * they came.
 */
export function maskTraceSpans(spans: readonly SpanRecord[], masker: Masker): Buffer | null {
  return masker.maskSpans(spans) ? encodeOtlpJson(spans) : null
}
