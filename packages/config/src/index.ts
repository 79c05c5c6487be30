export { ConfigError, loadConfig, loadConfigOrExit } from './load-config.ts'
export * from './services.ts'
export * as settings from './settings.ts'
