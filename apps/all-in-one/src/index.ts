export { buildAllInOneApp, type AllInOneApp, type AllInOneDeps } from './app.ts'
