export { createEmbeddedTestDatabase, createTestDatabase, type TestDatabase } from './test-database.ts'
export { engines } from './engines.ts'
export { migrateToBefore } from './migrate-before.ts'
