// Mentions are written as markdown links the console's member picker inserts,
// `@[Ada Lovelace](user:<id>)`: the text reads well anywhere, and the id is unambiguous where two
// people share a name.

const mention = /@\[[^\]\n]{0,200}\]\(user:([A-Za-z0-9_-]{1,64})\)/g

/** The distinct user ids a comment mentions, in order of first mention. */
export function mentionedUserIds(body: string): string[] {
  return [...new Set(Array.from(body.matchAll(mention), (match) => match[1] as string))]
}

/** The body with each mention written as `@Name`, for a plain-text mail. */
export function withPlainMentions(body: string): string {
  return body.replace(mention, (whole) => `@${whole.slice(2, whole.indexOf(']('))}`)
}
