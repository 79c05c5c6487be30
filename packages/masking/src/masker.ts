import type { AnyValue, AttributeMap, SpanRecord } from '@tracewell/span-schema'
import type { CompiledRule } from './compile-rules.ts'
import { looksLikeJsonDocument, maskJsonDocument } from './json-in-string.ts'

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
   * spans, events, links and resources. Returns whether anything changed; the spans' derived
   * fields (user, session, model) are then stale, and the caller decodes the spans again.
   */
  maskSpans(spans: readonly SpanRecord[]): boolean {
    let changed = false
    // Spans of one resource share its attributes object: it is masked once.
    const seenResources = new Set<AttributeMap>()
    for (const span of spans) {
      const name = maskString(span.name, this.#everywhere)
      if (name !== span.name) {
        span.name = name
        changed = true
      }
      if (span.statusMessage !== null) {
        const message = maskString(span.statusMessage, this.#everywhere)
        if (message !== span.statusMessage) {
          span.statusMessage = message
          changed = true
        }
      }
      if (this.#maskAttributes(span.attributes)) changed = true
      if (!seenResources.has(span.resourceAttributes)) {
        seenResources.add(span.resourceAttributes)
        if (this.#maskAttributes(span.resourceAttributes)) changed = true
      }
      for (const event of span.events) {
        const eventName = maskString(event.name, this.#everywhere)
        if (eventName !== event.name) {
          event.name = eventName
          changed = true
        }
        if (this.#maskAttributes(event.attributes)) changed = true
      }
      for (const link of span.links) if (this.#maskAttributes(link.attributes)) changed = true
    }
    return changed
  }

  #maskAttributes(attributes: AttributeMap): boolean {
    let changed = false
    for (const key in attributes) {
      const rules = this.#rulesFor(key)
      if (rules.length > 0 && maskAnyValue(attributes[key] as AnyValue, rules)) changed = true
    }
    return changed
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

/** Masks strings in an AnyValue, arrays and key-value lists included; returns whether it changed. */
function maskAnyValue(value: AnyValue, rules: readonly CompiledRule[]): boolean {
  if ('stringValue' in value) {
    const masked = maskString(value.stringValue, rules)
    if (masked === value.stringValue) return false
    value.stringValue = masked
    return true
  }
  let changed = false
  if ('arrayValue' in value) {
    for (const item of value.arrayValue.values) if (maskAnyValue(item, rules)) changed = true
  } else if ('kvlistValue' in value) {
    for (const entry of value.kvlistValue.values) if (maskAnyValue(entry.value, rules)) changed = true
  }
  return changed
}

/**
 * A string with the rules applied. A JSON document is masked value by value (json-in-string.ts),
 * but only once the rules find something in its text: most values hold nothing to mask, and
 * JSON keeps what these detectors look for readable (an @ or a digit is never escaped).
 */
export function maskString(text: string, rules: readonly CompiledRule[]): string {
  let masked = text
  for (const rule of rules) masked = rule.replace(masked)
  if (masked === text || !looksLikeJsonDocument(text)) return masked
  return maskJsonDocument(text, (inner) => maskString(inner, rules)) ?? masked
}
