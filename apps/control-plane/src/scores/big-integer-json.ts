// The Python SDK's async root-span helper hands the application its ids as Python ints, which
// `requests` writes into the JSON body as numbers of up to 39 digits; JSON.parse would round them
// to the nearest double. This reviver keeps the source text of every integer beyond 2^53 (V8's
// JSON.parse source-text access, Node ≥ 21), so those ids arrive exact, as decimal strings.

type ReviverContext = { source?: string } | undefined

export function parseJsonKeepingBigIntegers(text: string): unknown {
  const reviver = (_key: string, value: unknown, context: ReviverContext): unknown =>
    typeof value === 'number' && !Number.isSafeInteger(value) && context?.source !== undefined && /^-?\d+$/.test(context.source) ? context.source : value
  return JSON.parse(text, reviver as (key: string, value: unknown) => unknown)
}
