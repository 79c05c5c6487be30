import type { AnyValue, AttributeMap, SpanRecord } from '@tracewell/span-schema'
import type { CompiledRule } from './compile-rules.ts'
import { looksLikeJsonDocument, maskJsonDocument } from './json-in-string.ts'

/** What a string became, and how many times the spans held it. */
export interface MaskedString {
  masked: string
  count: number
  /** The rules that masked it. */
  rules: readonly CompiledRule[]
  /** Whether the same string became different things in different places (rules scoped to attributes). */
  ambiguous: boolean
}

// Keys repeat across spans (a few dozen distinct ones per project), so which rules apply to a key
// is decided once; the bound keeps a client that sends random keys from growing the map forever.
const KEY_CACHE_LIMIT = 4096

/** A project's compiled rules, applied to texts and to decoded spans. */
export class Masker {
  readonly #rules: readonly CompiledRule[]
  /** The rules without attribute globs: the ones for names, status messages and every attribute. */
  readonly #everywhere: readonly CompiledRule[]
  #rulesByKey = new Map<string, readonly CompiledRule[]>()

  constructor(rules: readonly CompiledRule[]) {
    this.#rules = rules
    this.#everywhere = rules.filter((rule) => rule.appliesTo === null)
  }

  get empty(): boolean {
    return this.#rules.length === 0
  }

  /** A text with the rules applied, as the tester shows it: every rule, as for an attribute of any key. */
  maskText(text: string): string {
    return maskString(text, this.#rules)
  }

  /**
   * Masks the spans in place: names, status messages, event names, and the attribute values of
   * spans, events, links and resources. Returns every string it changed, the original mapped to
   * what it became and how many times it was met (empty when nothing matched); the spans' derived
   * fields (user, session, model) are then stale, and the caller decodes the spans again.
   */
  maskSpans(spans: readonly SpanRecord[]): Map<string, MaskedString> {
    const changes = new Map<string, MaskedString>()
    const everywhere = this.#everywhere.length === this.#rules.length
    const mask = (text: string, rules: readonly CompiledRule[]): string => {
      // With every rule applying everywhere, a string masks the same wherever it stands, and one
      // that nothing matched is never looked up in the map: hashing every prompt cost more than
      // most detectors. Only strings that changed are counted.
      if (everywhere) {
        const masked = maskString(text, rules)
        if (masked === text) return text
        const change = changes.get(text)
        if (change === undefined) changes.set(text, { masked, count: 1, rules, ambiguous: false })
        else change.count++
        return masked
      }
      const change = changes.get(text)
      // A string met again under the same rules (a system prompt in every span) is masked once.
      if (change !== undefined && change.rules === rules) {
        change.count++
        return change.masked
      }
      const masked = maskString(text, rules)
      if (change !== undefined) {
        change.count++
        // Under other rules (attribute globs) the same string may become something else.
        if (masked !== change.masked) change.ambiguous = true
      } else if (masked !== text) {
        changes.set(text, { masked, count: 1, rules, ambiguous: false })
      }
      return masked
    }
    // Spans of one resource share its attributes object: it is masked once.
    const seenResources = new Set<AttributeMap>()
    for (const span of spans) {
      span.name = mask(span.name, this.#everywhere)
      if (span.statusMessage !== null) span.statusMessage = mask(span.statusMessage, this.#everywhere)
      this.#maskAttributes(span.attributes, mask)
      if (!seenResources.has(span.resourceAttributes)) {
        seenResources.add(span.resourceAttributes)
        this.#maskAttributes(span.resourceAttributes, mask)
      }
      for (const event of span.events) {
        event.name = mask(event.name, this.#everywhere)
        this.#maskAttributes(event.attributes, mask)
      }
      for (const link of span.links) this.#maskAttributes(link.attributes, mask)
    }
    return changes
  }

  #maskAttributes(attributes: AttributeMap, mask: MaskText): void {
    for (const key in attributes) {
      const rules = this.#rulesFor(key)
      if (rules.length > 0) maskAnyValue(attributes[key] as AnyValue, rules, mask)
    }
  }

  #rulesFor(key: string): readonly CompiledRule[] {
    let rules = this.#rulesByKey.get(key)
    if (rules === undefined) {
      rules = this.#rules.filter((rule) => rule.appliesTo === null || rule.appliesTo(key))
      if (this.#rulesByKey.size >= KEY_CACHE_LIMIT) this.#rulesByKey.clear()
      this.#rulesByKey.set(key, rules)
    }
    return rules
  }
}

type MaskText = (text: string, rules: readonly CompiledRule[]) => string

/** Masks strings in an AnyValue, arrays and key-value lists included. */
function maskAnyValue(value: AnyValue, rules: readonly CompiledRule[], mask: MaskText): void {
  if ('stringValue' in value) value.stringValue = mask(value.stringValue, rules)
  else if ('arrayValue' in value) for (const item of value.arrayValue.values) maskAnyValue(item, rules, mask)
  else if ('kvlistValue' in value) for (const entry of value.kvlistValue.values) maskAnyValue(entry.value, rules, mask)
}

/**
 * A string with the rules applied. A JSON document (the prompts and messages LLM spans carry) is
 * masked in its text, where the built-in detectors keep it valid JSON (json-text-masking.ts): no
 * parse and no rewrite, so that the document keeps its every other byte and costs one scan a
 * rule. JSON keeps what the detectors look for readable (an @ or a digit is never escaped).
 */
export function maskString(text: string, rules: readonly CompiledRule[]): string {
  const json = looksLikeJsonDocument(text)
  let masked = text
  let customMatched = false
  for (const rule of rules) {
    const next = rule.replace(masked, json)
    if (next !== masked && !rule.keepsJsonValid) customMatched = true
    masked = next
  }
  if (masked === text || !json || !customMatched) return masked
  // A custom pattern ran over the document's text and may have cut through its syntax: kept only
  // if the result still parses, else the document is masked value by value.
  if (isJson(masked)) return masked
  return maskJsonDocument(text, (inner) => maskString(inner, rules)) ?? masked
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}
