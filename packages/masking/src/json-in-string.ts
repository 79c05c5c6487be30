// Attribute values that hold JSON (the Langtrace SDKs' llm.prompts, the GenAI conventions'
// gen_ai.input.messages, OpenInference's llm.input_messages written whole): masked inside the
// document, value by value, so that a replacement lands inside a JSON string and the document
// still parses.

/** Whether a text is worth trying as JSON: an object or an array, as those attributes hold. */
export function looksLikeJsonDocument(text: string): boolean {
  const first = firstNonSpace(text, 0, 1)
  if (first !== '{' && first !== '[') return false
  const last = firstNonSpace(text, text.length - 1, -1)
  return (first === '{' && last === '}') || (first === '[' && last === ']')
}

function firstNonSpace(text: string, from: number, step: 1 | -1): string | undefined {
  for (let i = from; i >= 0 && i < text.length; i += step) {
    const char = text[i] as string
    if (char !== ' ' && char !== '\n' && char !== '\r' && char !== '\t') return char
  }
  return undefined
}

interface RawJson {
  rawJSON: string
}

// JSON.rawJSON (Node 22+) keeps a number's own digits, so an integer past 2^53 in the document
// is written back as it came instead of rounded; lib.d.ts does not declare it yet.
const json = JSON as unknown as {
  rawJSON(text: string): RawJson
  isRawJSON(value: unknown): value is RawJson
  parse(text: string, reviver: (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown): unknown
}

const keepDigits = (_key: string, value: unknown, context: { source?: string }) =>
  typeof value === 'number' && context.source !== undefined ? json.rawJSON(context.source) : value

/**
 * The document with `maskText` applied to each string and number in it, or null when the text is
 * not JSON. A number a rule matches (a card number written without quotes) becomes the
 * replacement's string.
 */
export function maskJsonDocument(text: string, maskText: (text: string) => string): string | null {
  let document: unknown
  try {
    document = json.parse(text, keepDigits)
  } catch {
    return null
  }
  return JSON.stringify(maskJsonValue(document, maskText))
}

function maskJsonValue(value: unknown, maskText: (text: string) => string): unknown {
  if (typeof value === 'string') return maskText(value)
  if (json.isRawJSON(value)) {
    const masked = maskText(value.rawJSON)
    return masked === value.rawJSON ? value : masked
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = maskJsonValue(value[i], maskText)
    return value
  }
  if (typeof value === 'object' && value !== null) {
    const object = value as Record<string, unknown>
    for (const key of Object.keys(object)) object[key] = maskJsonValue(object[key], maskText)
  }
  return value
}
