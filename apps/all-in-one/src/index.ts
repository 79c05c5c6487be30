export { buildAllInOneApp, type AllInOneApp } from './app.ts'
