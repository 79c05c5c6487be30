import { createRequire } from 'node:module'
import type { RE2JS } from 're2js'
import { attributeKeyMatcher } from './attribute-glob.ts'
import { builtInDetectors, DETECTOR_NAMES, type BuiltInDetector, type DetectorName } from './detectors.ts'
import { JsonMatchPlacer } from './json-text-masking.ts'
import { MaskingRuleError } from './masking-rule.error.ts'
import type { MaskingRule } from './masking-rule.schema.ts'

/** A rule ready to run: what it replaces in a text, and where it applies. */
export interface CompiledRule {
  detector: DetectorName
  /**
   * The text with every match replaced; the same string when nothing matched. With `json`, the
   * text is a JSON document and a built-in detector keeps it valid JSON (json-text-masking.ts); a
   * custom pattern may not, and maskString checks.
   */
  replace(text: string, json?: boolean): string
  /** Whether a match can never hold a quote or a backslash, so that `replace(text, true)` keeps JSON valid. */
  keepsJsonValid: boolean
  /** Which attribute keys it applies to; null: all, and names and status messages too. */
  appliesTo: ((key: string) => boolean) | null
}

// re2js (a 250 KB module) is loaded by the first custom pattern, not with the package: every
// service imports this one through its settings, and few are given a regex rule.
const require = createRequire(import.meta.url)
let re2js: typeof RE2JS | undefined
const loadedRE2JS = () => (re2js ??= (require('re2js') as { RE2JS: typeof RE2JS }).RE2JS)

export const defaultReplacement = (detector: DetectorName) => `[REDACTED:${detector}]`

/**
 * Compiles rules as given by the API or MASKING_DEFAULT_RULES. A custom pattern is compiled by
 * RE2JS, a port of RE2 that matches in time linear in the text; a pattern RE2 refuses (one that
 * does not parse, or needs backtracking: backreferences, lookaround) is a MaskingRuleError at
 * `<path>/<index>/pattern`.
 */
export function compileRules(rules: readonly MaskingRule[], path: string): CompiledRule[] {
  return rules.map((rule, index) => compileRule(rule, `${path}/${index}`))
}

function compileRule(rule: MaskingRule, path: string): CompiledRule {
  // Checked here too: MASKING_DEFAULT_RULES is read by TypeBox, which does not check an enum.
  if (!(DETECTOR_NAMES as readonly string[]).includes(rule.detector)) throw new MaskingRuleError(`${path}/detector`, `must be one of ${DETECTOR_NAMES.join(', ')}`)
  const replacement = rule.replacement ?? defaultReplacement(rule.detector)
  const appliesTo = rule.attributes === undefined ? null : attributeKeyMatcher(rule.attributes)
  if (rule.detector !== 'regex') {
    if (rule.pattern !== undefined) throw new MaskingRuleError(`${path}/pattern`, `only the regex detector takes a pattern, not ${rule.detector}`)
    return { detector: rule.detector, replace: builtInReplacer(builtInDetectors[rule.detector], replacement), keepsJsonValid: true, appliesTo }
  }
  if (rule.pattern === undefined) throw new MaskingRuleError(`${path}/pattern`, 'required with the regex detector')
  return { detector: 'regex', replace: re2Replacer(compilePattern(rule.pattern, `${path}/pattern`), replacement), keepsJsonValid: false, appliesTo }
}

function compilePattern(pattern: string, path: string): RE2JS {
  let compiled: RE2JS
  try {
    compiled = loadedRE2JS().compile(pattern)
  } catch (error) {
    throw new MaskingRuleError(path, `${(error as Error).message} (RE2 syntax: no backreferences or lookaround)`)
  }
  // A pattern that matches the empty string would insert the replacement between every character.
  if (compiled.matcher('').find()) throw new MaskingRuleError(path, 'matches the empty string')
  return compiled
}

function builtInReplacer({ pattern, leftGroup = false, accepts, mayContain }: BuiltInDetector, replacement: string): (text: string, json?: boolean) => string {
  return (text, json = false) => {
    if (!mayContain(text)) return text
    // Made at the first candidate: most texts have none, and it is not free.
    let inJson: JsonMatchPlacer | null = null
    const parts: string[] = []
    let from = 0
    pattern.lastIndex = 0
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const start = leftGroup ? match.index - (match[1] as string).length : match.index
      const end = match.index + match[0].length
      // A candidate reaching back into the previous match is not one.
      if (start < from) continue
      if (json) inJson ??= new JsonMatchPlacer(text, replacement)
      const candidate = text.slice(start, end)
      if (accepts !== undefined && !accepts(inJson === null ? candidate : inJson.unescaped(candidate, start))) continue
      parts.push(text.slice(from, start), inJson === null ? replacement : inJson.replacementAt(candidate, start))
      from = end
    }
    if (parts.length === 0) return text
    parts.push(text.slice(from))
    return parts.join('')
  }
}

function re2Replacer(pattern: RE2JS, replacement: string): (text: string) => string {
  // A function, so that `$1` in a replacement stays literal text.
  const literal = () => replacement
  const prefix = literalPrefix(pattern)
  return (text) => {
    // A text without the literal every match starts with is left before re2js builds a matcher for it.
    if (prefix !== '' && !text.includes(prefix)) return text
    const matcher = pattern.matcher(text)
    return matcher.find() ? pattern.matcher(text).replaceAll(literal) : text
  }
}

/**
 * The literal text every match of the pattern starts with ('' when none): what RE2 computes for
 * itself (case-sensitive runes from the program's start) and reads only inside a matcher.
 */
function literalPrefix(pattern: RE2JS): string {
  const prefix = (pattern as unknown as { re2Input?: { prefix?: unknown } }).re2Input?.prefix
  return typeof prefix === 'string' ? prefix : ''
}
