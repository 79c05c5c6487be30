import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// Console sessions are signed cookies that nothing on the server holds, so signing out could only
// ask the browser to forget its cookie: a copy kept elsewhere went on working until it expired.
// Signing out now records the session's id here, and every replica refuses a recorded session.
// A row is needed only until the session would have expired anyway; sign-outs delete the rows
// past their expiry.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('console_session_revocations')
    .addColumn('session_id', 'text', (col) => col.primaryKey())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('revoked_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema.createIndex('console_session_revocations_expires_at_idx').on('console_session_revocations').column('expires_at').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('console_session_revocations').execute()
}
