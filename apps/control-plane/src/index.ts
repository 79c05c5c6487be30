export { buildApp, type ControlPlaneDeps } from './app.ts'
export {
  bootstrapFromSettings,
  defaultProjectName,
  defaultKeysAreLive,
  defaultTeamName,
  ensureDefaultWorkspace,
  type BootstrapResult,
  type BootstrapSettings,
  type DefaultWorkspace,
} from './bootstrap.ts'
export { ensureInitialOwner, offerSetupLink, setupPath } from './accounts/first-owner.ts'
export { controlPlaneRoutes, type ConsoleSessionOptions, type ControlPlaneRoutesOptions } from './routes/control-plane.routes.ts'
export { ssoOptionsOf, type SsoOptions } from './accounts/sso/sso-options.ts'
export { consoleAssetsPlugin, type ConsoleAssetsOptions } from './console/console-assets.plugin.ts'
export { csrfHeader } from './console/csrf.ts'
export { sessionCookieName } from './console/console-sessions.ts'
export { compileTemplate, extractVariables, fillTemplate, missingVariables, type CompiledTemplate } from '@tracewell/llm-messages'
