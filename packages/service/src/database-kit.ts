import { findApiKeyIdentitiesByHashes, isDatabaseUnavailable, isStatementTimeout, touchApiKeys, type Db } from '@tracewell/db'
import type { ApiKeyStore, DatabaseFailures } from '@tracewell/http'

// What @tracewell/http asks of a database, answered by @tracewell/db: http imports no database
// code (a dependency-cruiser rule keeps it so), the service joins the two.

/** Postgres's outages and statement timeouts, for the error handlers (createApp's `databaseFailures`). */
export const postgresFailures: DatabaseFailures = { isUnavailable: isDatabaseUnavailable, isStatementTimeout }

/** The API keys table as the key verifier's store (apiKeysPlugin's `store`). */
export function apiKeyStore(db: Db): ApiKeyStore {
  return {
    lookupMany: (keyHashes) => findApiKeyIdentitiesByHashes(db, keyHashes),
    touch: (ids, usedAt) => touchApiKeys(db, ids, usedAt),
  }
}
