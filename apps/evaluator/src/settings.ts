import type { EvaluatorConfig } from '@tracewell/config'
import { encryptionKeyOf } from '@tracewell/auth'
import type { Outbound } from '@tracewell/outbound'
import type { QueueRedisTarget } from '@tracewell/queue'
import type { EvaluatorPluginOptions } from './evaluator.plugin.ts'
import type { MonitorsPluginOptions } from './monitors/monitors.plugin.ts'

type EvaluatorSettings = Pick<
  EvaluatorConfig,
  | 'QUEUE_PREFIX'
  | 'EVALUATOR_CONCURRENCY'
  | 'EVALUATOR_MAX_ATTEMPTS'
  | 'EVALUATOR_BACKOFF_MS'
  | 'EVALUATOR_POLL_INTERVAL_MS'
  | 'EVALUATOR_TRACE_QUIET_MS'
  | 'EVALUATOR_LOOKBACK_MS'
  | 'EVALUATOR_JUDGE_TIMEOUT_MS'
  | 'EXPERIMENT_CONCURRENCY'
  | 'EXPERIMENT_CALL_TIMEOUT_MS'
>

/** The worker's options from the settings, shared by the evaluator service and `npm start`. */
export function evaluatorOptionsFromSettings(settings: EvaluatorSettings, redis: QueueRedisTarget | undefined, encryptionKeyHex: string, outbound: Outbound): EvaluatorPluginOptions {
  return {
    outbound,
    redis,
    prefix: settings.QUEUE_PREFIX,
    encryptionKey: encryptionKeyOf(encryptionKeyHex),
    concurrency: settings.EVALUATOR_CONCURRENCY,
    maxAttempts: settings.EVALUATOR_MAX_ATTEMPTS,
    backoffMs: settings.EVALUATOR_BACKOFF_MS,
    pollIntervalMs: settings.EVALUATOR_POLL_INTERVAL_MS,
    quietMs: settings.EVALUATOR_TRACE_QUIET_MS,
    lookbackMs: settings.EVALUATOR_LOOKBACK_MS,
    judgeTimeoutMs: settings.EVALUATOR_JUDGE_TIMEOUT_MS,
    experimentConcurrency: settings.EXPERIMENT_CONCURRENCY,
    experimentCallTimeoutMs: settings.EXPERIMENT_CALL_TIMEOUT_MS,
  }
}

/** The monitors' evaluation loop's options, shared by the evaluator service and `npm start`. */
export function monitorOptionsFromSettings(settings: Pick<EvaluatorConfig, 'MONITOR_POLL_INTERVAL_MS' | 'MONITOR_CONCURRENCY'>): MonitorsPluginOptions {
  return { pollIntervalMs: settings.MONITOR_POLL_INTERVAL_MS, concurrency: settings.MONITOR_CONCURRENCY }
}
