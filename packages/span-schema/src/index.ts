export * from './any-value.ts'
export * from './span.schema.ts'
