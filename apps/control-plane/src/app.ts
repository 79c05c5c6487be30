import { encryptionKeyOf } from '@tracewell/auth'
import { defaultIngestRateLimit, defaultMaskingRules, type ControlPlaneConfig } from '@tracewell/config'
import { createDb } from '@tracewell/db'
import type { App } from '@tracewell/http'
import { defineService, type ServiceDeps } from '@tracewell/service'
import { notificationSettingsOf } from '@tracewell/notifications'
import { createOutbound, outboundOptionsOf, type HostLookup } from '@tracewell/outbound'
import { consolePageUrl } from './accounts/account-links.ts'
import { ensureInitialOwner, offerSetupLink, setupPath } from './accounts/first-owner.ts'
import { bootstrapFromSettings } from './bootstrap.ts'
import { ssoOptionsOf } from './accounts/sso/sso-options.ts'
import { consoleAssetsPlugin } from './console/console-assets.plugin.ts'
import { controlPlaneRoutes } from './routes/control-plane.routes.ts'

export interface ControlPlaneDeps extends ServiceDeps {
  /** Where the built console is; @tracewell/console's dist/ unless a test brings its own. */
  consoleDistDir?: string
  /** How the outbound guard resolves host names; the system's resolver unless a test brings its own. */
  outboundLookup?: HostLookup
}

/** The control plane: keys, prompts, projects, retention, trace queries and the web console; INIT_* bootstrap applied at build. */
export const controlPlaneService = defineService<ControlPlaneConfig, ControlPlaneDeps>({
  name: 'control-plane',
  openApi: (config) => ({
    title: 'Tracewell control plane',
    description: 'API keys, prompt registry, projects, retention settings and trace queries.',
    // The console's team-key session routes exist only where sessions can be signed; people's
    // routes name their session's scheme either way (without SESSION_SECRET nobody signs in).
    securitySchemes: config.SESSION_SECRET === undefined ? ['apiKey', 'adminKey', 'userSession'] : ['apiKey', 'adminKey', 'consoleSession', 'userSession'],
  }),
  apiKeys: true,
  migrations: 'check',
  async register(app, config, deps) {
    await bootstrapFromSettings(app.db, config, app.log)
    await ensureInitialOwner(app.db, config, app.log)
    // Until someone owns a team, the log says where to make the owner account (every replica's
    // start offers a link of its own; using one ends them all).
    // A database that does not answer yet must not stop the start (the API answers 503 until it
    // does, as ingest does): the link is then offered by the next start.
    const setupToken = await offerSetupLink(app.db).catch((error: unknown) => {
      app.log.warn({ err: error }, 'could not look for a team owner: the setup link, if one is needed, is offered at the next start')
      return null
    })
    if (setupToken !== null) {
      const link = config.PUBLIC_URL === undefined ? `<this control plane's console address>${setupPath(setupToken)}` : consolePageUrl(config.PUBLIC_URL, setupPath(setupToken))
      app.log.warn({ setupLink: link }, `No team has an owner yet: open ${link} to make the owner account (once), or set INIT_USER_EMAIL and INIT_USER_PASSWORD`)
    }
    if (config.ADMIN_API_KEY === undefined) app.log.info('ADMIN_API_KEY is unset: POST /api/teams is refused; create teams with INIT_TEAM_NAME')
    const sessionSecret = config.SESSION_SECRET
    const readDb = config.DATABASE_READ_URL === undefined ? undefined : createDb({ databaseUrl: config.DATABASE_READ_URL, poolSize: config.DATABASE_POOL_SIZE })
    if (readDb) app.addHook('onClose', async () => readDb.destroy())
    const outbound = createOutbound({ ...outboundOptionsOf(config), ...(deps.outboundLookup ? { lookup: deps.outboundLookup } : {}) })
    app.addHook('onClose', () => outbound.close())
    await app.register(controlPlaneRoutes, {
      readDb,
      adminApiKey: config.ADMIN_API_KEY,
      queryTimeoutMs: config.QUERY_TIMEOUT_MS,
      defaultIngestLimit: defaultIngestRateLimit(config),
      defaultMaskingRules: defaultMaskingRules(config),
      consoleSessions: sessionSecret === undefined ? undefined : { secret: sessionSecret, keyCacheTtlMs: config.KEY_CACHE_TTL_MS, userSessionIdleMs: config.SESSION_IDLE_HOURS * 3_600_000, userSessionMaxAgeMs: config.SESSION_MAX_HOURS * 3_600_000 },
      consoleKeySignIn: config.CONSOLE_KEY_SIGN_IN === 'true',
      llmConnectionKey: config.LLM_CONNECTION_ENCRYPTION_KEY === undefined ? undefined : encryptionKeyOf(config.LLM_CONNECTION_ENCRYPTION_KEY),
      experimentCallTimeoutMs: config.EXPERIMENT_CALL_TIMEOUT_MS,
      outbound,
      notifications: notificationSettingsOf(config),
      sso: ssoOptionsOf(config),
      signup: config.SIGNUP,
    })
    // The console signs people in with cookies, so it is served only where they can be signed.
    if (sessionSecret !== undefined) await app.register(consoleAssetsPlugin, { distDir: deps.consoleDistDir })
    else app.log.info('SESSION_SECRET is unset: the web console is not served')
  },
})

export const buildApp = (config: ControlPlaneConfig, deps?: ControlPlaneDeps): Promise<App> => controlPlaneService.build(config, deps)
