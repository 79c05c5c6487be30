import { isDecimal } from './int64.ts'
import type { AnyValue, AttributeMap } from './span-record.ts'

// The columns derived from attributes for querying (docs/api.md#send-traces). Each list is in precedence order:
// Langtrace's own `llm.*` names first, then the OpenTelemetry GenAI semantic conventions.

const VENDOR_KEYS = ['llm.vendor', 'gen_ai.system', 'langtrace.service.name'] as const
const MODEL_KEYS = ['llm.request.model', 'gen_ai.request.model', 'llm.response.model', 'gen_ai.response.model'] as const
const REQUEST_TYPE_KEYS = ['llm.request.type', 'gen_ai.operation.name'] as const
const INPUT_TOKEN_KEYS = ['llm.usage.prompt_tokens', 'gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens'] as const
const OUTPUT_TOKEN_KEYS = [
  'llm.usage.completion_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.usage.completion_tokens',
] as const
const TOTAL_TOKEN_KEYS = ['llm.usage.total_tokens', 'gen_ai.usage.total_tokens'] as const

export interface ServiceFields {
  serviceName: string | null
  serviceVersion: string | null
}

/** The value of a string attribute; other kinds do not count. */
export function stringAttribute(attributes: AttributeMap, key: string): string | null {
  const value = attributes[key] as { stringValue?: unknown } | undefined
  return value !== undefined && typeof value.stringValue === 'string' ? value.stringValue : null
}

function firstString(attributes: AttributeMap, keys: readonly string[]): string | null {
  for (const key of keys) {
    const value = stringAttribute(attributes, key)
    if (value !== null) return value
  }
  return null
}

/**
 * A token count: a non-negative integer given as intValue, an integral doubleValue, or a numeric
 * string. Anything else is not a count (null), never an error: these columns are a convenience.
 */
export function tokenCount(value: AnyValue | undefined): number | null {
  if (value === undefined) return null
  const v = value as { intValue?: unknown; doubleValue?: unknown; stringValue?: unknown }
  let n: number | undefined
  if (typeof v.intValue === 'string') {
    n = Number(v.intValue)
  } else if (typeof v.doubleValue === 'number') {
    n = v.doubleValue
  } else if (typeof v.stringValue === 'string') {
    const s = v.stringValue.trim()
    if (s.length <= 15 && isDecimal(s, false)) n = Number(s)
  }
  return n !== undefined && Number.isSafeInteger(n) && n >= 0 ? n : null
}

function firstCount(attributes: AttributeMap, keys: readonly string[]): number | null {
  for (const key of keys) {
    const count = tokenCount(attributes[key])
    if (count !== null) return count
  }
  return null
}

export function serviceFields(resourceAttributes: AttributeMap): ServiceFields {
  return {
    serviceName: stringAttribute(resourceAttributes, 'service.name'),
    serviceVersion: stringAttribute(resourceAttributes, 'service.version'),
  }
}

export function llmVendor(attributes: AttributeMap): string | null {
  return firstString(attributes, VENDOR_KEYS)
}

export function llmModel(attributes: AttributeMap): string | null {
  return firstString(attributes, MODEL_KEYS)
}

export function llmRequestType(attributes: AttributeMap): string | null {
  return firstString(attributes, REQUEST_TYPE_KEYS)
}

export function inputTokens(attributes: AttributeMap): number | null {
  return firstCount(attributes, INPUT_TOKEN_KEYS)
}

export function outputTokens(attributes: AttributeMap): number | null {
  return firstCount(attributes, OUTPUT_TOKEN_KEYS)
}

/** The reported total, else input + output when both are known. */
export function totalTokens(attributes: AttributeMap, input: number | null, output: number | null): number | null {
  const total = firstCount(attributes, TOTAL_TOKEN_KEYS)
  if (total !== null) return total
  return input !== null && output !== null ? input + output : null
}
