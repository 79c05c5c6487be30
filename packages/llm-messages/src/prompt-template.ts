// Placeholders in a prompt's value (docs/api.md#get-a-prompt): `${name}` (canonical, what Langtrace users write),
// `{{name}}` (with optional inner spaces, as mustache users write it) and `{name}`. One regular
// expression scans left to right, so a filled-in value is never scanned again: a value that itself
// contains `${other}` arrives verbatim.
const placeholderPattern = /\$\{([A-Za-z_][\w.-]*)\}|\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}|\{([A-Za-z_][\w.-]*)\}/g

function placeholderName(match: RegExpExecArray): string {
  return (match[1] ?? match[2] ?? match[3]) as string
}

/** The distinct placeholder names in `value`, in order of first appearance (any syntax). */
export function extractVariables(value: string): string[] {
  const names = new Set<string>()
  for (const match of value.matchAll(placeholderPattern)) names.add(placeholderName(match))
  return [...names]
}

/**
 * A prompt value split once into literal text and the slots of declared variables, so that
 * filling it per request is a string concatenation and no regular expression runs.
 */
export interface CompiledTemplate {
  /** The declared variables, in declared order (the order missing ones are reported in). */
  readonly variables: readonly string[]
  /** `literals.length === slots.length + 1`; the result is literals[0] + value(slots[0]) + literals[1] + … */
  readonly literals: readonly string[]
  readonly slots: readonly string[]
}

export function compileTemplate(value: string, declaredVariables: readonly string[]): CompiledTemplate {
  const declared = new Set(declaredVariables)
  const literals: string[] = []
  const slots: string[] = []
  let literalStart = 0
  for (const match of value.matchAll(placeholderPattern)) {
    const name = placeholderName(match)
    // Only declared names are placeholders; anything else (e.g. `{x}` in a code sample) stays text.
    if (!declared.has(name)) continue
    literals.push(value.slice(literalStart, match.index))
    slots.push(name)
    literalStart = match.index + match[0].length
  }
  literals.push(value.slice(literalStart))
  return { variables: [...declaredVariables], literals, slots }
}

/** The declared variables that are absent or empty in `values`, in declared order. */
export function missingVariables(template: CompiledTemplate, values: ReadonlyMap<string, string>): string[] {
  const missing: string[] = []
  for (const name of template.variables) {
    const value = values.get(name)
    if (value === undefined || value === '') missing.push(name)
  }
  return missing
}

/** Fills every declared placeholder with its value verbatim; call after `missingVariables` is empty. */
export function fillTemplate(template: CompiledTemplate, values: ReadonlyMap<string, string>): string {
  const { literals, slots } = template
  let result = literals[0] as string
  for (let index = 0; index < slots.length; index++) {
    result += (values.get(slots[index] as string) ?? '') + (literals[index + 1] as string)
  }
  return result
}
