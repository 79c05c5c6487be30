import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../database.ts'

/** What a repository function runs on: the database, or a transaction of it. */
export type Executor = Kysely<Database> | Transaction<Database>
