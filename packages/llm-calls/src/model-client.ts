import type OpenAI from 'openai'
import type * as OpenAIPackage from 'openai'
import type { Outbound } from '@tracewell/outbound'
import { importOpenAI } from './openai-package.ts'

// The `openai` client every model call makes (playground runs, experiment items, judges): its
// requests go through the outbound guard (the policy, no redirect, the reply's bound, the whole
// call within timeoutMs), its own retries off (the queues retry, with backoff).

export interface ModelEndpoint {
  baseUrl: string
  apiKey: string
  /** The whole call, from connect to the reply's last byte. */
  timeoutMs: number
  outbound: Outbound
}

export async function modelClient(endpoint: ModelEndpoint): Promise<{ openai: typeof OpenAIPackage; client: OpenAI }> {
  const openai = await importOpenAI()
  const client = new openai.default({
    baseURL: endpoint.baseUrl,
    apiKey: endpoint.apiKey,
    maxRetries: 0,
    timeout: endpoint.timeoutMs,
    fetch: endpoint.outbound.fetchWithin(endpoint.timeoutMs),
  })
  return { openai, client }
}
