import type { Migration } from 'kysely'
import * as initialSchema from './2026-11-22T0300-initial-schema.ts'
import * as promptLabels from './2026-11-24T0900-prompt-labels.ts'

// Every migration, by name; names sort in the order they apply. Listed statically (not read from
// the file system) so that the same list works from source, from a container image and in tests.
export const migrations: Record<string, Migration> = {
  '2026-11-22T0300-initial-schema': initialSchema,
  '2026-11-24T0900-prompt-labels': promptLabels,
}
