import { Type } from '@sinclair/typebox'
import fp from 'fastify-plugin'

export type ReadinessCheck = () => Promise<unknown>

export interface HealthOptions {
  /** Dependencies that must answer for the service to be ready, by name (e.g. postgres, redis). */
  readinessChecks: Record<string, ReadinessCheck>
  /** Figures shown under `details`, by name; one that fails or is slow is left out, and readiness does not depend on them. */
  details?: Record<string, ReadinessCheck> | undefined
  /** A check slower than this counts as failed, so a hung dependency cannot hang the probe. */
  checkTimeoutMs?: number
}

const HealthResponseSchema = Type.Object({ status: Type.Literal('ok') })
const ReadinessResponseSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  checks: Type.Record(Type.String(), Type.String()),
  details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
})

function withTimeout(check: ReadinessCheck, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))
  return Promise.race([check(), timeout]).finally(() => clearTimeout(timer))
}

async function readDetails(details: Record<string, ReadinessCheck> | undefined, timeoutMs: number): Promise<Record<string, unknown> | undefined> {
  if (details === undefined) return undefined
  const entries = Object.entries(details)
  const outcomes = await Promise.allSettled(entries.map(([, read]) => withTimeout(read, timeoutMs)))
  const figures: Record<string, unknown> = {}
  entries.forEach(([name], index) => {
    const outcome = outcomes[index]
    if (outcome?.status === 'fulfilled') figures[name] = outcome.value
  })
  return figures
}

/** GET /healthz (the process is up) and GET /readyz (its dependencies answer), docs/api.md#service-endpoints. */
export const healthPlugin = fp<HealthOptions>(
  async (app, options) => {
    const timeoutMs = options.checkTimeoutMs ?? 2_000
    app.get('/healthz', { schema: { hide: true, response: { 200: HealthResponseSchema } } }, async () => ({ status: 'ok' as const }))
    app.get('/readyz', { schema: { hide: true, response: { 200: ReadinessResponseSchema, 503: ReadinessResponseSchema } } }, async (_request, reply) => {
      const entries = Object.entries(options.readinessChecks)
      const outcomes = await Promise.allSettled(entries.map(([, check]) => withTimeout(check, timeoutMs)))
      const checks: Record<string, string> = {}
      entries.forEach(([name], index) => {
        const outcome = outcomes[index]
        checks[name] = outcome?.status === 'fulfilled' ? 'ok' : String((outcome?.reason as Error | undefined)?.message ?? 'failed')
      })
      const ready = outcomes.every((outcome) => outcome.status === 'fulfilled')
      const details = await readDetails(options.details, timeoutMs)
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks, ...(details === undefined ? {} : { details }) })
    })
  },
  { name: 'health', fastify: '5.x' },
)
