/**
 * A key matcher for glob patterns of attribute keys: `*` stands for any characters (dots
 * included: `gen_ai.*` covers `gen_ai.prompt.0.content`), `?` for one, everything else for itself.
 */
export function attributeKeyMatcher(globs: readonly string[]): (key: string) => boolean {
  const alternatives = globs.map((glob) => glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*+/g, '.*').replace(/\?/g, '.'))
  // Keys are short (a few dozen characters), so a glob's stars cost nothing that matters.
  const pattern = new RegExp(`^(?:${alternatives.join('|')})$`, 's')
  return (key) => pattern.test(key)
}
