import type { EvaluatorConfig } from '@tracewell/config'
import type { App } from '@tracewell/http'
import { defineService, type ServiceDeps } from '@tracewell/service'
import { createOutbound, outboundOptionsOf } from '@tracewell/outbound'
import { queueRedisTargetOf } from '@tracewell/queue'
import { evaluatorPlugin } from './evaluator.plugin.ts'
import { monitorsPlugin } from './monitors/monitors.plugin.ts'
import { notificationsPlugin } from './notifications/notifications.plugin.ts'
import { evaluatorOptionsFromSettings, monitorOptionsFromSettings, notificationOptionsFromSettings } from './settings.ts'

/**
 * The evaluator: no public API, only /healthz, /readyz and /metrics, and the worker that judges
 * traces with the projects' evaluators over the queue kit's job queues, and the loop that evaluates
 * the projects' monitors (docs/architecture.md).
 */
export const evaluatorService = defineService<EvaluatorConfig>({
  name: 'evaluator',
  migrations: 'check',
  async register(app, config) {
    const outbound = createOutbound(outboundOptionsOf(config))
    // Added before the worker's: closed after its running calls have finished.
    app.addHook('onClose', () => outbound.close())
    await app.register(evaluatorPlugin, evaluatorOptionsFromSettings(config, queueRedisTargetOf(config), config.LLM_CONNECTION_ENCRYPTION_KEY, outbound))
    await app.register(monitorsPlugin, monitorOptionsFromSettings(config))
    await app.register(notificationsPlugin, notificationOptionsFromSettings(config, config.LLM_CONNECTION_ENCRYPTION_KEY, outbound))
    return { readiness: { queue: () => app.evaluator.ping() } }
  },
})

export type EvaluatorDeps = ServiceDeps

export const buildApp = (config: EvaluatorConfig, deps?: EvaluatorDeps): Promise<App> => evaluatorService.build(config, deps)
