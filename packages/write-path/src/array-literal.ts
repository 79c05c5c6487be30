/** A text[] value as Postgres reads it (array_in): every element quoted, `"` and `\` escaped. */
export function textArrayLiteral(values: readonly string[] | null | undefined): string | null {
  if (values === null || values === undefined) return null
  return values.length === 0 ? '{}' : `{"${values.map(escapeArrayElement).join('","')}"}`
}

/** Model, vendor and service names rarely hold `"` or `\`: the regular expression only for those that do. */
function escapeArrayElement(value: string): string {
  return value.includes('"') || value.includes('\\') ? value.replace(/["\\]/g, '\\$&') : value
}
