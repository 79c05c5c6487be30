export { buildApp, type ControlPlaneDeps } from './app.ts'
export {
  bootstrapFromSettings,
  defaultProjectName,
  defaultKeysAreLive,
  defaultTeamName,
  ensureDefaultWorkspace,
  type BootstrapLogger,
  type BootstrapResult,
  type BootstrapSettings,
  type DefaultWorkspace,
} from './bootstrap.ts'
export { controlPlaneRoutes, type ControlPlaneRoutesOptions } from './routes/control-plane.routes.ts'
export { compileTemplate, extractVariables, fillTemplate, missingVariables, type CompiledTemplate } from './prompt-template.ts'
