export { createEmbeddedTestDatabase, createTestDatabase, type TestDatabase } from './test-database.ts'
export { engines } from './engines.ts'
