import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { IngestRateLimitValues } from '@tracewell/config'
import type { MaskingRule } from '@tracewell/masking'
import { installErrorHandler, messageBody, requireUtf8Json } from '@tracewell/http'
import AjvModule from 'ajv'
import { notificationChannelSecretContext, type Db } from '@tracewell/db'
import { createChannelSender, createMailer, type NotificationSettings } from '@tracewell/notifications'
import type { Outbound } from '@tracewell/outbound'
import { Counter, type Registry } from 'prom-client'
import { PromptCache, type PromptCacheStats } from '../prompt-cache.ts'
import { consoleSessionPlugin, type ConsoleSessionPluginOptions } from '../console/console-session.plugin.ts'
import { requireRoutePermissions } from '../accounts/route-permissions.ts'
import { apiKeyRoutes } from './api-key.routes.ts'
import type { SsoOptions } from '../accounts/sso/sso-options.ts'
import { ssoRoutes } from './sso.routes.ts'
import { ssoSettingsRoutes } from './sso-settings.routes.ts'
import { modelPriceRoutes } from './model-prices.routes.ts'
import { refusingUnstorable } from './storable-input.validator.ts'
import { jsonBodyError } from './json-body-error.ts'
import { refuseUnknownQueryParameters } from './strict-query.ts'
import { projectRoutes } from './projects.routes.ts'
import { promptLabelRoutes } from './prompt-labels.routes.ts'
import { promptLookupRoutes } from './prompt-lookup.routes.ts'
import { promptsetRoutes } from './promptsets.routes.ts'
import { retentionRoutes } from './retention.routes.ts'
import { erasureRoutes } from './erasures.routes.ts'
import { exportRoutes } from './export.routes.ts'
import { ingestLimitRoutes } from './ingest-limit.routes.ts'
import { maskingRoutes } from './masking.routes.ts'
import { consoleSessionRoutes } from './console-session.routes.ts'
import { signInRoutes } from './sign-in.routes.ts'
import { meRoutes } from './me.routes.ts'
import { teamRoutes } from './teams.routes.ts'
import { sessionRoutes } from './sessions.routes.ts'
import { usageRoutes } from './usage.routes.ts'
import { traceQueryRoutes } from './trace-queries.routes.ts'
import { summariesStatusRoutes } from './summaries-status.routes.ts'
import { decorateTimedQuery, DEFAULT_QUERY_TIMEOUT_MS } from './timed-queries.ts'
import { ReplicaReads } from './replica-reads.ts'
import { scoreRoutes } from './scores.routes.ts'
import { scoreConfigRoutes } from './score-configs.routes.ts'
import { langtraceEvaluationRoutes } from './langtrace-evaluation.routes.ts'
import { llmConnectionRoutes } from './llm-connections.routes.ts'
import { evaluatorRoutes } from './evaluators.routes.ts'
import { monitorRoutes } from './monitors.routes.ts'
import { evaluatorPreviewRoutes } from './evaluator-preview.routes.ts'
import { datasetRoutes } from './datasets.routes.ts'
import { dashboardRoutes } from './dashboards.routes.ts'
import { experimentRoutes } from './experiments.routes.ts'
import { playgroundRoutes } from './playground.routes.ts'
import { notificationChannelRoutes } from './notification-channels.routes.ts'
import { annotationQueueRoutes } from './annotation-queues.routes.ts'
import { commentRoutes } from './comments.routes.ts'
import { savedViewRoutes } from './saved-views.routes.ts'
import { traceShareRoutes } from './trace-shares.routes.ts'
import { installAuditLog } from '../audit/audit-log.hook.ts'
import { auditLogRoutes } from './audit-log.routes.ts'
import { invitationRoutes } from './invitations.routes.ts'
import { memberRoutes } from './members.routes.ts'
import { passwordResetRoutes } from './password-reset.routes.ts'
import { setupRoutes } from './setup.routes.ts'
import { signUpRoutes } from './sign-up.routes.ts'
import type { SignupMode } from '../accounts/signup-mode.ts'

export interface ControlPlaneRoutesOptions {
  /** ADMIN_API_KEY: the secret of POST /api/teams; unset, that endpoint refuses everyone. */
  adminApiKey?: string | undefined
  /** How long a prompt lookup is cached; other instances see a change within this (≤ 5000 ms). */
  promptCacheTtlMs?: number
  /** The web console's sessions (/api/session, and the session cookie on team-key routes); absent without SESSION_SECRET. */
  consoleSessions?: ConsoleSessionOptions | undefined
  /** CONSOLE_KEY_SIGN_IN: team keys keep signing the console in once an owner account exists. */
  consoleKeySignIn?: boolean
  /** QUERY_TIMEOUT_MS: the statement timeout of trace, session and usage queries. */
  queryTimeoutMs?: number
  /** LLM_CONNECTION_ENCRYPTION_KEY's 32 bytes: seals the keys of LLM connections; without it none can be made. */
  llmConnectionKey?: Buffer | undefined
  /** DATABASE_READ_URL's pool: the trace, session and usage queries read from it (replica-reads.ts). */
  readDb?: Db | undefined
  /** EXPERIMENT_CALL_TIMEOUT_MS: how long a playground run's call to its model may take. */
  experimentCallTimeoutMs?: number
  /** The outbound guard: base URLs are checked by it, and the playground and connection tests call out through it. */
  outbound: Outbound
  /** SMTP_URL, MAIL_FROM, PUBLIC_URL and NOTIFICATION_TIMEOUT_MS: notification channels' test messages (notificationSettingsOf). */
  notifications: NotificationSettings
  /** The settings' default ingest rate limit (defaultIngestRateLimit); none when absent. */
  defaultIngestLimit?: IngestRateLimitValues | null
  /** MASKING_DEFAULT_RULES (defaultMaskingRules); none when absent. */
  defaultMaskingRules?: readonly MaskingRule[]
  /** PUBLIC_URL and OIDC_* (ssoOptionsOf); without it, only teams' own providers, and none without PUBLIC_URL. */
  sso?: SsoOptions | undefined
  /** SIGNUP: who may make an account (invite unless said). */
  signup?: SignupMode
  /** Called once the setup link made the first owner (`npm start` forgets the link it kept). */
  onSetupDone?: () => Promise<void>
}

export type ConsoleSessionOptions = ConsoleSessionPluginOptions

// Query strings and path parameters arrive as text and are coerced to their schema's types;
// JSON bodies are typed already, so there `"30"` is not a number and `null` is not `false`.
const Ajv = AjvModule.default
const ajvOptions = { useDefaults: true, removeAdditional: false, allErrors: false, strict: false } as const
const coercingAjv = new Ajv({ ...ajvOptions, coerceTypes: 'array' })
const strictAjv = new Ajv({ ...ajvOptions, coerceTypes: false })

/** Every control-plane route's validator of a request part (compiled on first use: refusingUnstorable). */
export const routeValidator = ({ schema, httpPart }: { schema: object; httpPart?: string | undefined }) =>
  refusingUnstorable(() => (httpPart === 'body' ? strictAjv : coercingAjv).compile(schema))

/**
 * Every control-plane route, as one encapsulated plugin: the all-in-one process
 * registers it beside the other services' routes. Needs the `db`, `api-keys`, `auth` and
 * `metrics` plugins registered by the host app.
 */
export const controlPlaneRoutes: FastifyPluginAsyncTypebox<ControlPlaneRoutesOptions> = async (app, options) => {
  installErrorHandler(app, messageBody)
  app.setValidatorCompiler(routeValidator)
  requireRoutePermissions(app, options.consoleSessions !== undefined)
  refuseUnknownQueryParameters(app)
  app.decorateRequest('controlPlaneProjectId', null)
  app.decorateRequest('principal', null)
  app.decorateRequest('teamId', null)
  installAuditLog(app)
  app.decorateRequest('permission', null)
  const replica = options.readDb === undefined ? undefined : new ReplicaReads(app.db, options.readDb)
  decorateTimedQuery(app, options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS, replica)
  if (replica) {
    // Before the answer leaves: the caller's next read must find the replica caught up with it.
    app.addHook('onSend', async (request, reply) => {
      if (!READS.has(request.method) && reply.statusCode < 400) await replica.recordWrite()
    })
    replicaMetrics(app.metrics, replica)
  }

  // POST /api/api-key is sent with `Content-Type: application/json` and no body (docs/api.md#api-keys);
  // Fastify's own parser would refuse that as an empty JSON body.
  const jsonParser = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  // A charset other than UTF-8 (charset=utf-16) is a 415: the body would be read as UTF-8.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    try {
      requireUtf8Json(request.headers['content-type'] ?? '')
    } catch (error) {
      return done(error as Error, undefined)
    }
    if (body === '') return done(null, undefined)
    jsonParser(request, body as string, (error, value) => (error ? done(jsonBodyError(body as string, error), undefined) : done(null, value)))
  })

  const sso = options.sso ?? { publicUrl: undefined, installOidc: null }
  const promptCache = new PromptCache({ ttlMs: Math.min(options.promptCacheTtlMs ?? 5_000, 5_000), stats: promptCacheStats(app.metrics) })

  if (options.consoleSessions === undefined) {
    app.decorate('consoleSessions', null)
    app.decorate('userSessions', null)
  }
  else {
    await app.register(consoleSessionPlugin, options.consoleSessions)
    const sessions = app.consoleSessions as NonNullable<typeof app.consoleSessions>
    await app.register(consoleSessionRoutes, { sessions, keySignIn: options.consoleKeySignIn ?? false })
    const userSessions = app.userSessions as NonNullable<typeof app.userSessions>
    await app.register(signInRoutes, { userSessions })
    await app.register(meRoutes, { userSessions })
    // Signing in through a provider starts a person's session: only where sessions exist.
    await app.register(ssoRoutes, { sso, outbound: options.outbound, encryptionKey: options.llmConnectionKey })
  }
  await app.register(ssoSettingsRoutes, { sso, outbound: options.outbound, encryptionKey: options.llmConnectionKey })

  await app.register(teamRoutes, { adminApiKey: options.adminApiKey })
  await app.register(auditLogRoutes)
  await app.register(projectRoutes)
  await app.register(apiKeyRoutes)
  await app.register(retentionRoutes)
  await app.register(erasureRoutes)
  await app.register(exportRoutes)
  await app.register(ingestLimitRoutes, { defaultLimit: options.defaultIngestLimit ?? null })
  await app.register(maskingRoutes, { defaultRules: options.defaultMaskingRules ?? [] })
  await app.register(modelPriceRoutes)
  await app.register(promptLookupRoutes, { promptCache })
  await app.register(promptsetRoutes, { promptCache })
  await app.register(promptLabelRoutes, { promptCache })
  await app.register(traceQueryRoutes)
  await app.register(sessionRoutes)
  await app.register(usageRoutes)
  await app.register(summariesStatusRoutes)
  await app.register(scoreConfigRoutes)
  await app.register(scoreRoutes)
  await app.register(langtraceEvaluationRoutes)
  await app.register(llmConnectionRoutes, { encryptionKey: options.llmConnectionKey, outbound: options.outbound })
  await app.register(evaluatorRoutes)
  await app.register(evaluatorPreviewRoutes)
  await app.register(monitorRoutes)
  await app.register(datasetRoutes)
  await app.register(dashboardRoutes)
  await app.register(experimentRoutes)
  await app.register(annotationQueueRoutes)
  await app.register(savedViewRoutes)
  await app.register(traceShareRoutes, { publicUrl: options.notifications.publicUrl })
  await app.register(playgroundRoutes, { encryptionKey: options.llmConnectionKey, callTimeoutMs: options.experimentCallTimeoutMs ?? 120_000, outbound: options.outbound })
  const notifications = options.notifications
  // Invitations and password resets go through the same mailer as notification emails.
  const mailer = notifications.email === undefined ? undefined : createMailer(notifications.email, notifications.timeoutMs)
  if (mailer) app.addHook('onClose', async () => mailer.close())
  const signup = options.signup ?? 'invite'
  await app.register(setupRoutes, { onSetupDone: options.onSetupDone })
  await app.register(signUpRoutes, { signup })
  await app.register(invitationRoutes, { mailer, publicUrl: notifications.publicUrl, signup })
  await app.register(commentRoutes, { mailer, publicUrl: notifications.publicUrl })
  await app.register(memberRoutes)
  await app.register(passwordResetRoutes, { mailer, publicUrl: notifications.publicUrl })
  const sender = createChannelSender({
    outbound: options.outbound,
    timeoutMs: notifications.timeoutMs,
    email: notifications.email,
    encryptionKey: options.llmConnectionKey,
    secretContext: notificationChannelSecretContext,
  })
  app.addHook('onClose', async () => sender.close())
  await app.register(notificationChannelRoutes, {
    sender,
    outbound: options.outbound,
    encryptionKey: options.llmConnectionKey,
    emailConfigured: notifications.email !== undefined,
    publicUrl: notifications.publicUrl,
  })
}

const cacheMetricName = 'tracewell_control_plane_prompt_cache_lookups_total'

interface LookupCounts {
  hit: number
  miss: number
}

// One set of counts per registry: the all-in-one app has one registry, and tests may build
// several apps in one process.
const countsByRegistry = new WeakMap<Registry, LookupCounts>()

/**
 * Cache hits are counted as plain numbers and handed to prom-client when /metrics is scraped: a
 * labelled `inc()` validates and hashes its labels on every call, which a cached GET
 * /api/promptset would otherwise pay on every request.
 */
function promptCacheStats(registry: Registry): PromptCacheStats {
  let counts = countsByRegistry.get(registry)
  if (counts === undefined) {
    const registered: LookupCounts = { hit: 0, miss: 0 }
    new Counter({
      name: cacheMetricName,
      help: 'GET /api/promptset registry lookups by cache result',
      labelNames: ['result'] as const,
      registers: [registry],
      collect() {
        this.reset()
        this.inc({ result: 'hit' }, registered.hit)
        this.inc({ result: 'miss' }, registered.miss)
      },
    })
    countsByRegistry.set(registry, registered)
    counts = registered
  }
  const lookups = counts
  return { hit: () => void lookups.hit++, miss: () => void lookups.miss++ }
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** How many query-route reads the replica answered, and how many went to the primary instead. */
function replicaMetrics(registry: Registry, replica: ReplicaReads): void {
  new Counter({
    name: 'tracewell_control_plane_query_reads_total',
    help: 'Trace, session and usage queries by the database that answered them (replica, or primary when the replica was behind or unreachable)',
    labelNames: ['database'] as const,
    registers: [registry],
    collect() {
      this.reset()
      this.inc({ database: 'replica' }, replica.served.replica)
      this.inc({ database: 'primary' }, replica.served.primary)
    },
  })
}
