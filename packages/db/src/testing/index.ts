export { createEmbeddedTestDatabase, createTestDatabase, type TestDatabase } from './test-database.ts'
