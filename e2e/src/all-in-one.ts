import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SpanDto } from '@tracewell/db'
import { callJson } from './api-client.ts'
import { eventually, startService, type RunningService } from './processes.ts'

/** `npm start` on an embedded database of its own, with the keys its first start printed. */
export interface AllInOne {
  service: RunningService
  projectKey: string
  teamKey: string
  stop(): Promise<void>
}

export async function startAllInOne(settings: Record<string, string> = {}): Promise<AllInOne> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-e2e-'))
  const service = await startService('all-in-one', 'apps/all-in-one/src/server.ts', { ...settings, DATA_DIR: dataDir })
  const projectKey = await eventually(async () => /Project API key:\s+(\S+)/.exec(service.output())?.[1], 10_000, 'the first-start banner')
  const teamKey = /Team API key:\s+(\S+)/.exec(service.output())?.[1] ?? ''
  return {
    service,
    projectKey,
    teamKey,
    async stop() {
      await service.stop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** A span as GET /api/traces/:id returns it (the fields these tests read). */
export type StoredLlmSpan = Pick<
  SpanDto,
  | 'name' | 'spanId' | 'parentSpanId' | 'llmVendor' | 'llmModel' | 'llmResponseModel' | 'inputTokens' | 'outputTokens' | 'totalTokens' | 'cachedInputTokens'
  | 'reasoningTokens' | 'sessionId' | 'userId' | 'inputCostUsd' | 'outputCostUsd' | 'totalCostUsd' | 'costSource' | 'startTime' | 'attributes' | 'events' | 'tokensEstimated'
>

/** The stored spans of a trace, once at least `count` of them are there. */
export function storedTrace(stack: AllInOne, traceId: string, count: number): Promise<StoredLlmSpan[]> {
  return eventually(async () => {
    const response = await callJson<{ spans: StoredLlmSpan[] }>(`${stack.service.url}/api/traces/${traceId}`, { headers: { 'x-api-key': stack.projectKey } })
    return response.status === 200 && response.body.spans.length >= count ? response.body.spans : undefined
  }, 20_000, `trace ${traceId} with ${count} spans`)
}

/** A trace's row in the trace list (GET /api/traces), found by the filters given. */
export interface TraceRow {
  traceId: string
  startTime: string
  sessionId: string | null
  userId: string | null
  models: string[]
  totalTokens: number | null
  costUsd: number | null
  tokensEstimated: boolean
}

export async function listedTraces(stack: AllInOne, filters: Record<string, string>): Promise<TraceRow[]> {
  const response = await callJson<{ traces: TraceRow[] }>(`${stack.service.url}/api/traces?${new URLSearchParams(filters)}`, { headers: { 'x-api-key': stack.projectKey } })
  if (response.status !== 200) throw new Error(`GET /api/traces answered ${response.status}: ${JSON.stringify(response.body)}`)
  return response.body.traces
}
