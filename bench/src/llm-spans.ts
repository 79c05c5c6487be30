// Realistic LLM spans for the benchmarks: OTLP JSON, list-form attributes (chat messages and
// choices as JSON strings, as the Langtrace SDKs record them). Large spans (~1.5 KB of OTLP JSON
// each) carry a system prompt, a full answer and twelve attributes; small ones (~0.75 KB) a
// one-line question and answer, and only the six attributes that make an LLM call (vendor, model,
// tokens, messages, choices). Long ones (~3.6 KB) are large ones whose system prompt holds the
// policies and the retrieved order history a support bot is given: rows over the 2 KB at which
// Postgres compresses a row's largest values.
import { randomBytes } from 'node:crypto'

const TRACE_PLACEHOLDER = 'TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT' // 32 characters, replaced per request

export type SpanSize = 'large' | 'small' | 'long'

/**
 * The first span's start: a minute before the benchmark began, so that the spans go into today's
 * partition of spans, as live traffic does (a fixed date became, a week later, a date with no
 * partition of its own, and the benchmarks measured the default partition instead).
 */
const firstStartNanos = BigInt(Date.now() - 60_000) * 1_000_000n

function llmSpan(index: number, size: SpanSize): object {
  const attribute = (key: string, value: object) => ({ key, value })
  const order = 10_000 + index
  // Large and long spans: a system prompt, a full answer and the attributes besides.
  const detailed = size !== 'small'
  const messages = JSON.stringify(
    detailed
      ? [
          { role: 'system', content: `You are a support assistant for Acme. Answer briefly, cite the order number, and never promise refunds.${size === 'long' ? longContext(order) : ''}` },
          { role: 'user', content: `Order #${order} arrived damaged: the box was crushed and the blender jar has a crack near the handle. What can I do?` },
        ]
      : [{ role: 'user', content: `Where is order #${order}?` }],
  )
  const answer = detailed ? `Sorry about order #${order}. Please send a photo of the crack; we will ship a replacement jar within 3 days.` : `Order #${order} ships today.`
  const message = { role: 'assistant', content: answer }
  const choices = JSON.stringify([detailed ? { index: 0, finish_reason: 'stop', message } : { message }])
  const start = firstStartNanos + BigInt(index) * 1_000_000n
  return {
    traceId: TRACE_PLACEHOLDER,
    spanId: (index + 1).toString(16).padStart(16, '0'),
    parentSpanId: index === 0 ? '' : '0000000000000001',
    name: detailed ? 'openai.chat.completions.create' : 'openai.chat',
    kind: 3,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 734_512_345n),
    attributes: [
      attribute('llm.vendor', { stringValue: 'openai' }),
      attribute('llm.request.model', { stringValue: 'gpt-4o-mini' }),
      attribute('llm.usage.prompt_tokens', { intValue: '57' }),
      attribute('llm.usage.completion_tokens', { intValue: '31' }),
      attribute('llm.request.messages', { stringValue: messages }),
      attribute('llm.response.choices', { stringValue: choices }),
      // What the Langtrace SDKs record besides, in large spans.
      ...(detailed
        ? [
            attribute('langtrace.service.name', { stringValue: 'openai' }),
            attribute('llm.response.model', { stringValue: 'gpt-4o-mini-2024-07-18' }),
            attribute('llm.request.type', { stringValue: 'chat_completion' }),
            attribute('llm.request.temperature', { doubleValue: 0.2 }),
            attribute('llm.request.stream', { boolValue: false }),
            attribute('llm.usage.total_tokens', { intValue: '88' }),
          ]
        : []),
    ],
    status: { code: 1 },
  }
}

const POLICIES = [
  'Damaged items: ask for a photo of the damage and the packaging, then offer a replacement of the damaged part; a refund needs a supervisor.',
  'Late deliveries: check the carrier status first; after five business days without a scan, open a trace request with the carrier and tell the customer its number.',
  'Returns: unused items within 30 days of delivery, in their original packaging; the customer pays the return label unless the item arrived damaged or wrong.',
  'Warranty: two years on motors and heating elements, one year on glass and plastic parts; proof of purchase is the order number.',
  'Tone: friendly, short sentences, no promises about dates the carrier has not confirmed, never blame the warehouse or the carrier by name.',
]

/** The policies and the order history a support bot's system prompt carries (~3 KB, varying by order). */
function longContext(order: number): string {
  const history = Array.from({ length: 8 }, (_, i) => {
    const placed = order - 37 * (i + 1)
    return `Order #${placed}: ${1 + ((placed * 7) % 4)} item(s), delivered on day ${(placed % 28) + 1}, ${placed % 3 === 0 ? 'returned, refund issued' : 'no issue reported'}.`
  })
  return `\n\nPolicies:\n${POLICIES.map((policy, i) => `${i + 1}. ${policy}`).join('\n')}\n\nThe customer's previous orders:\n${history.join('\n')}\n\nKnowledge base:\n${POLICIES.slice(0, 3).map((policy) => `- ${policy} (article ${order % 97})`).join('\n')}`
}

export function otlpBody(spanCount: number, size: SpanSize = 'large'): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'support-bot' } }, { key: 'service.version', value: { stringValue: '2.3.1' } }] },
        scopeSpans: [{ scope: { name: '@langtrase/typescript-sdk', version: '6.3.7' }, spans: Array.from({ length: spanCount }, (_, index) => llmSpan(index, size)) }],
      },
    ],
  })
}

/** Bodies with a trace id of their own each, so the writer stores every span (no idempotent skips). */
export function bodyFactory(spanCount: number, size: SpanSize = 'large'): () => string {
  const template = otlpBody(spanCount, size)
  const runTag = randomBytes(8).toString('hex')
  let counter = 0
  return () => template.replaceAll(TRACE_PLACEHOLDER, `${runTag}${(++counter).toString(16).padStart(16, '0')}`)
}
