import type { AnyValue, Attributes } from '@tracewell/llm-messages'

// Whether a span's token counts (and the cost computed from them) are estimates rather than what
// the provider reported (docs/semantic-conventions.md, "Estimated tokens"). Two ways to know:
//
//  1. The span says so: `gen_ai.usage.estimated` or `llm.usage.estimated` true. No convention
//     names this yet; these are the names an instrumentation (or an application's own span
//     processor) can set.
//  2. The call was streamed (`gen_ai.request.stream` or `llm.is_streaming` true) and the
//     instrumentation is known to count a stream's tokens itself instead of reading the usage the
//     provider sends at its end:
//     - the Langtrace SDKs (their spans carry `langtrace.sdk.name`): the TypeScript SDK (6.3)
//       counts a stream's prompt and completion from their text, and stores the two swapped;
//     - OpenLLMetry for JavaScript (scope `@traceloop/instrumentation-…`): a stream's usage chunk is
//       not read; with `enrichTokens` the counts are tiktoken's. Version 0.27 does not mark its
//       streamed spans at all, so those cannot be told apart from a plain call's (documented).
//
// Only a span that has a token count is marked: without counts there is nothing to qualify.

const EXPLICIT = ['gen_ai.usage.estimated', 'llm.usage.estimated'] as const
const STREAMED = ['gen_ai.request.stream', 'llm.is_streaming'] as const

/** A boolean attribute that is true: boolValue, or the text "true" (some SDKs stringify every attribute). */
function isTrue(value: AnyValue | undefined): boolean {
  if (value === undefined || value === null) return false
  return value.boolValue === true || value.stringValue === 'true'
}

/** Whether the instrumentation that made the span counts a stream's tokens itself. */
function countsStreamsItself(attributes: Attributes, scopeName: string | null): boolean {
  if (attributes['langtrace.sdk.name'] !== undefined) return true
  return scopeName !== null && scopeName.startsWith('@traceloop/instrumentation-')
}

/** Whether the span's token counts are estimates (see above); false for a span without counts. */
export function tokensEstimated(attributes: Attributes, scopeName: string | null, hasCounts: boolean): boolean {
  if (!hasCounts) return false
  if (EXPLICIT.some((key) => isTrue(attributes[key]))) return true
  return STREAMED.some((key) => isTrue(attributes[key])) && countsStreamsItself(attributes, scopeName)
}
