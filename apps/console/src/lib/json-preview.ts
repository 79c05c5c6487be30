// Dataset inputs and outputs are any JSON: shown as text, a list of chat messages as its lines.

/** A value as one readable text: strings as they are, messages as `role: content` lines, anything else as JSON. */
export function jsonPreview(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (Array.isArray(value) && value.every((message) => typeof message === 'object' && message !== null && 'role' in message && 'content' in message)) {
    return value.map((message: { role: unknown; content: unknown }) => `${String(message.role)}: ${typeof message.content === 'string' ? message.content : JSON.stringify(message.content)}`).join('\n')
  }
  return JSON.stringify(value, null, 2)
}

/** Text typed into a form as JSON when it parses, else as the string it is. */
export function jsonOrText(text: string): unknown {
  const trimmed = text.trim()
  if (trimmed === '') return undefined
  try {
    return JSON.parse(trimmed)
  } catch {
    return text
  }
}
