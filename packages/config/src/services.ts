import { Type, type Static } from '@sinclair/typebox'
import { loadConfig } from './load-config.ts'
import { maskingSettingChecks } from './masking-rules.ts'
import {
  adminSettings,
  bootstrapSettings,
  consoleSettings,
  accountSettings,
  ssoSettings,
  databaseSettings,
  embeddedDatabaseSettings,
  embeddedQueueSettings,
  evaluatorSettings,
  ingestRateLimitRefreshSettings,
  ingestRateLimitSettings,
  ingestServiceSettings,
  maskingSettings,
  ingestSettings,
  janitorSettings,
  keySettings,
  llmConnectionSettings,
  notificationSettings,
  optionalQueueTargetRule,
  outboundSettings,
  queueSettings,
  querySettings,
  queueTargetRule,
  replicaWaitSettings,
  retentionScheduleSettings,
  serverSettings,
  spanLimitSettings,
  startupSettings,
  writerSettings,
} from './settings.ts'

// Default ports (docs/settings.md).
export const defaultPorts = { allInOne: 3000, ingest: 3001, controlPlane: 3002, janitor: 3003, writer: 3004, evaluator: 3005 } as const

export const IngestConfigSchema = Type.Object({
  ...serverSettings(defaultPorts.ingest),
  ...databaseSettings,
  ...queueSettings,
  ...replicaWaitSettings,
  ...ingestSettings,
  ...ingestServiceSettings,
  ...spanLimitSettings,
  ...ingestRateLimitSettings,
  ...ingestRateLimitRefreshSettings,
  ...maskingSettings,
  ...keySettings,
  ...startupSettings,
}, { ...queueTargetRule, settingChecks: maskingSettingChecks })
export type IngestConfig = Static<typeof IngestConfigSchema>

export const WriterConfigSchema = Type.Object({
  ...serverSettings(defaultPorts.writer),
  ...databaseSettings,
  ...queueSettings,
  ...replicaWaitSettings,
  ...writerSettings,
  ...spanLimitSettings,
  ...startupSettings,
}, queueTargetRule)
export type WriterConfig = Static<typeof WriterConfigSchema>

export const ControlPlaneConfigSchema = Type.Object({
  ...serverSettings(defaultPorts.controlPlane),
  ...databaseSettings,
  ...keySettings,
  ...adminSettings,
  ...bootstrapSettings,
  ...consoleSettings,
  ...accountSettings,
  ...ssoSettings,
  ...querySettings,
  ...llmConnectionSettings,
  ...outboundSettings,
  // The test message of a notification channel is sent from the control plane.
  SMTP_URL: notificationSettings.SMTP_URL,
  MAIL_FROM: notificationSettings.MAIL_FROM,
  PUBLIC_URL: notificationSettings.PUBLIC_URL,
  NOTIFICATION_TIMEOUT_MS: notificationSettings.NOTIFICATION_TIMEOUT_MS,
  // The playground calls the model from the control plane, within the same bound as experiments.
  EXPERIMENT_CALL_TIMEOUT_MS: evaluatorSettings.EXPERIMENT_CALL_TIMEOUT_MS,
  // The default limit, to say what a project without its own gets (GET …/ingest-limit).
  ...ingestRateLimitSettings,
  // The default rules, to say what a project without its own gets (GET …/masking).
  MASKING_DEFAULT_RULES: maskingSettings.MASKING_DEFAULT_RULES,
  ...startupSettings,
}, { settingChecks: maskingSettingChecks })
export type ControlPlaneConfig = Static<typeof ControlPlaneConfigSchema>

export const JanitorConfigSchema = Type.Object({
  ...serverSettings(defaultPorts.janitor),
  ...databaseSettings,
  ...janitorSettings,
  ...startupSettings,
})
export type JanitorConfig = Static<typeof JanitorConfigSchema>

/** The evaluator worker: LLM-as-judge over new traces and on-demand runs, its own BullMQ queue. */
export const EvaluatorConfigSchema = Type.Object({
  ...serverSettings(defaultPorts.evaluator),
  ...databaseSettings,
  // Its judgments' queues are on the span queue's Redis or Redis Cluster, one hash slot each
  // (packages/queue/src/project-job.queue.ts): QUEUE_SHARDS is the span queue's alone.
  REDIS_URL: queueSettings.REDIS_URL,
  REDIS_CLUSTER_NODES: queueSettings.REDIS_CLUSTER_NODES,
  REDIS_CLUSTER_PASSWORD: queueSettings.REDIS_CLUSTER_PASSWORD,
  QUEUE_PREFIX: queueSettings.QUEUE_PREFIX,
  LLM_CONNECTION_ENCRYPTION_KEY: Type.String({ pattern: llmConnectionSettings.LLM_CONNECTION_ENCRYPTION_KEY.pattern, description: llmConnectionSettings.LLM_CONNECTION_ENCRYPTION_KEY.description }),
  ...evaluatorSettings,
  ...outboundSettings,
  ...notificationSettings,
  ...startupSettings,
}, queueTargetRule)
export type EvaluatorConfig = Static<typeof EvaluatorConfigSchema>

/** `npm start`: everything in one process, Postgres and Redis optional (embedded defaults). */
export const AllInOneConfigSchema = Type.Object({
  ...serverSettings(defaultPorts.allInOne),
  ...embeddedDatabaseSettings,
  ...embeddedQueueSettings,
  ...replicaWaitSettings,
  ...ingestSettings,
  ...spanLimitSettings,
  ...ingestRateLimitSettings,
  ...ingestRateLimitRefreshSettings,
  ...maskingSettings,
  ...writerSettings,
  ...keySettings,
  ...adminSettings,
  ...bootstrapSettings,
  ...janitorSettings,
  ...retentionScheduleSettings,
  ...consoleSettings,
  ...accountSettings,
  ...ssoSettings,
  ...querySettings,
  ...llmConnectionSettings,
  ...evaluatorSettings,
  ...outboundSettings,
  ...notificationSettings,
  ...startupSettings,
}, { ...optionalQueueTargetRule, settingChecks: maskingSettingChecks })
export type AllInOneConfig = Static<typeof AllInOneConfigSchema>

/** `npm run queue:replay`: moves the span-batch queue's failed jobs back to waiting. */
export const ReplayConfigSchema = Type.Object({ ...queueSettings }, queueTargetRule)
export type ReplayConfig = Static<typeof ReplayConfigSchema>

/** `npm run migrate`: one connection is all it needs, so no pool size. */
/**
 * `npm run migrate`: the database, and optionally the writers' queue, which it pauses around a
 * migration that fills what it adds from the spans already stored.
 */
export const MigrateConfigSchema = Type.Object(
  { DATABASE_URL: embeddedDatabaseSettings.DATABASE_URL, DATA_DIR: embeddedDatabaseSettings.DATA_DIR, ...embeddedQueueSettings, ...startupSettings },
  optionalQueueTargetRule,
)
export type MigrateConfig = Static<typeof MigrateConfigSchema>

/**
 * Where test suites find the real Postgres (an admin connection: each test file creates a
 * database of its own there) and Redis. Read from TEST_DATABASE_URL and TEST_REDIS_URL, never
 * from DATABASE_URL and REDIS_URL: those name what a developer's `npm start` uses, and tests must
 * not create databases or queues there. Unset, the local servers.
 */
export const TestServersSchema = Type.Object({
  TEST_DATABASE_URL: Type.String({ default: 'postgres://postgres@127.0.0.1:5432/postgres', description: 'admin connection URL for test databases' }),
  TEST_REDIS_URL: Type.String({ default: 'redis://127.0.0.1:6379', description: 'Redis for tests' }),
})

/** The test servers (TestServersSchema), under the names the suites use. */
export function testEnvironment(env: Record<string, string | undefined> = process.env): { DATABASE_URL: string; REDIS_URL: string } {
  const { TEST_DATABASE_URL, TEST_REDIS_URL } = loadConfig(TestServersSchema, env)
  return { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL }
}

/**
 * The previous form of the test environment, still read by the queue's suites (which use only
 * Redis): REDIS_URL, or the local Redis. Everything else reads testEnvironment().
 */
export const TestEnvironmentSchema = Type.Object({
  REDIS_URL: Type.String({ default: 'redis://127.0.0.1:6379', description: 'Redis for tests' }),
})

type SpanLimitConfig = Pick<IngestConfig, 'SPAN_ATTRIBUTE_COUNT_LIMIT' | 'SPAN_EVENT_COUNT_LIMIT' | 'SPAN_LINK_COUNT_LIMIT' | 'ATTRIBUTE_VALUE_LENGTH_LIMIT'>

/** The span limits of a service's settings, as @tracewell/otlp's configureSpanLimits takes them. */
export const spanLimitsOf = (config: SpanLimitConfig) => ({
  attributeCount: config.SPAN_ATTRIBUTE_COUNT_LIMIT,
  eventCount: config.SPAN_EVENT_COUNT_LIMIT,
  linkCount: config.SPAN_LINK_COUNT_LIMIT,
  attributeValueLength: config.ATTRIBUTE_VALUE_LENGTH_LIMIT,
})
