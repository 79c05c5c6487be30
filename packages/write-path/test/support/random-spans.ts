import { seededRandom } from '@tracewell/test-support'
import type { StoredSpanFields } from '@tracewell/db'

/** A span as the tests write it: its attributes and events as objects. */
export type SpanFields = Omit<StoredSpanFields, 'projectId'>

// Quotes, backslashes, control characters, non-ASCII, astral characters: everything JSON escapes
// or passes through, and text that looks like an escape (`\u0000` spelled out with a backslash).
const pieces = [
  '"', '\\', '\n', '\r', '\t', '\b', '\f', '\u0001', '\u001f', '\u007f', '\u2028', 'é', '✓', 'Zoë', '日本', '😀', '{"a":1}', '},{',
  ' ', 'x', '\\u0000', '\\\\u0000', '\\ud800', 'u0000',
]
// What Postgres cannot store as it is (see storable-text.ts): U+0000 and lone surrogates. Two
// neighbouring pieces may also pair a high and a low surrogate into one well-formed character.
const unstorablePieces = ['\u0000', '\ud800', '\udbff', '\udc00', '\udfff']

/**
 * A seeded generator of spans with awkward text in every text and JSON field, numbers at the edges
 * of their columns (token counts up to 2^40, durations past 2^53) and times from the epoch to year 9892.
 */
export function spanGenerator(seed: number) {
  const random = seededRandom(seed)
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T
  const orNull = <T>(value: T): T | null => (random() < 0.3 ? null : value)
  const hex = (digits: number) => {
    let value = ''
    while (value.length < digits) value += Math.floor(random() * 2 ** 24).toString(16).padStart(6, '0')
    return value.slice(0, digits)
  }

  /** Text of up to 11 pieces; with `unstorable`, U+0000 and lone surrogates among them. */
  const text = (unstorable: boolean): string => {
    let value = ''
    for (let i = Math.floor(random() * 12); i > 0; i--) value += unstorable && random() < 0.25 ? pick(unstorablePieces) : pick(pieces)
    return value
  }

  const startNanos = (): bigint =>
    pick([
      () => 1_700_000_000_000_000_000n + BigInt(Math.floor(random() * 1e15)),
      () => BigInt(Math.floor(random() * 1e9)), // within the epoch's first second: fewer than ten digits
      () => 915_148_800_000_000_000n + BigInt(Math.floor(random() * 1e15)), // 1999, before Postgres's epoch
      () => 250_000_000_000_000_000_000n + BigInt(Math.floor(random() * 1e15)), // year 9892
    ])()

  const durationNs = (): string =>
    pick([
      () => `${Math.floor(random() * 1e12)}`,
      () => `${2n ** 53n + BigInt(Math.floor(random() * 1e6))}`,
      () => '9223372036854775807',
    ])()

  const usd = (): number =>
    pick([() => 0, () => Math.round(random() * 1e-6 * 1e12) / 1e12, () => Math.round(random() * 1e12) / 1e12, () => Math.round(random() * 5000), () => 123456.000001])()

  function randomSpan(unstorable: boolean): SpanFields {
    const start = startNanos()
    const end = start + BigInt(Math.floor(random() * 1e12))
    return {
      traceId: hex(32), spanId: hex(16), parentSpanId: orNull(hex(16)),
      name: text(unstorable), kind: Math.floor(random() * 6), startTimeUnixNano: `${start}`, endTimeUnixNano: `${end}`,
      durationNs: durationNs(), traceState: orNull(text(unstorable)), statusCode: Math.floor(random() * 3), statusMessage: orNull(text(unstorable)),
      serviceName: orNull(text(unstorable)), serviceVersion: orNull('1.0'), scopeName: orNull(text(unstorable)), scopeVersion: orNull('2'),
      llmVendor: orNull('openai'), llmModel: orNull(text(unstorable)), llmRequestType: orNull('chat'),
      inputTokens: orNull(Math.floor(random() * 2 ** 40)), outputTokens: orNull(7), totalTokens: orNull(2 ** 40),
      llmResponseModel: orNull(text(unstorable)), cachedInputTokens: orNull(Math.floor(random() * 2 ** 40)), cacheWriteInputTokens: orNull(0),
      reasoningTokens: orNull(2 ** 40), sessionId: orNull(text(unstorable)), userId: orNull(text(unstorable)),
      // USD as the writer computes them: rounded to 1e-12, from sub-micro-dollar (JavaScript writes
      // those with an exponent) to whole dollars.
      inputCostUsd: orNull(usd()), outputCostUsd: orNull(usd()), totalCostUsd: orNull(usd()),
      costSource: orNull(pick(['attribute', 'custom_price', 'price_table'] as const)),
      // From the start time rather than a draw of its own, so the spans drawn after stay as they were.
      tokensEstimated: start % 2n === 0n,
      attributes: {
        [text(unstorable)]: { stringValue: text(unstorable) }, 'n': { doubleValue: random() }, 'i': { intValue: '-9007199254740993' },
        // A JSON-encoded string attribute (llm.request.messages) as Python's json.dumps writes it: non-ASCII as \u escapes.
        'llm.request.messages': { stringValue: JSON.stringify([{ role: 'user', content: text(unstorable) }]).replaceAll('é', '\\u00e9') },
      },
      resourceAttributes: { 'service.name': { stringValue: text(unstorable) } },
      events: random() < 0.5 ? [] : [{ timeUnixNano: `${start}`, name: text(unstorable), attributes: { [text(unstorable)]: { boolValue: true } } }],
      links: random() < 0.7 ? [] : [{ traceId: hex(32), spanId: hex(16), traceState: null, attributes: {} }],
    }
  }

  return { random, pick, randomSpan }
}

/**
 * `value` as Postgres stores it, written independently of storable-text.ts: every string (object
 * keys too) with U+0000 and lone surrogates replaced by U+FFFD.
 */
export function storable<T>(value: T): T {
  if (typeof value === 'string') return value.toWellFormed().replaceAll('\0', '\ufffd') as T
  if (Array.isArray(value)) return value.map(storable) as T
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [storable(key), storable(inner)])) as T
  }
  return value
}
