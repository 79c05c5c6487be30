export { ConfigError, loadConfig, loadConfigOrExit } from './load-config.ts'
export * from './services.ts'
export * as settings from './settings.ts'
export { StartupDependencyError, waitForDependencies, waitForDependenciesOrExit, type StartupDependency, type StartupWaitOptions } from './startup-dependencies.ts'
