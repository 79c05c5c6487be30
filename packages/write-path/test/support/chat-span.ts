import type { SpanInsert } from '@tracewell/db'

/** What sets one test trace's only span (an LLM chat call of gpt-4o in service `api`) apart from another's. */
export interface ChatSpan {
  projectId: string
  /** The trace's number: its id. */
  i: number
  startMs: number
  durationMs: number
  failed: boolean
  inputTokens: number
  costUsd: number
  sessionId: string
  userId: string
}

/** A one-span trace as the dashboards' tests store them. */
export function chatSpan({ projectId, i, startMs, durationMs, failed, inputTokens, costUsd, sessionId, userId }: ChatSpan): SpanInsert {
  const start = BigInt(startMs) * 1_000_000n
  const duration = BigInt(durationMs) * 1_000_000n
  return {
    projectId, traceId: i.toString(16).padStart(32, '0'), spanId: '1'.padStart(16, '0'), parentSpanId: null,
    name: 'op', kind: 1, startTimeUnixNano: String(start), endTimeUnixNano: String(start + duration), durationNs: String(duration), traceState: null,
    statusCode: failed ? 2 : 0, statusMessage: null, serviceName: 'api', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: 'openai', llmModel: 'gpt-4o', llmRequestType: 'chat', inputTokens, outputTokens: 5, totalTokens: null, totalCostUsd: costUsd,
    sessionId, userId, resourceAttributes: {}, events: [], links: [], attributes: {},
  }
}
