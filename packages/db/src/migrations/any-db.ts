import type { Kysely } from 'kysely'

/** A Kysely of any schema: migrations are written against the schema of their day, not today's `Database`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's own idiom for schema-agnostic code
export type AnyDb = Kysely<any>
