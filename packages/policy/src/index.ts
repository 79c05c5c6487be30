export * from './roles.ts'
export * from './permissions.ts'
export * from './decide.ts'
export * from './permission-table.ts'
