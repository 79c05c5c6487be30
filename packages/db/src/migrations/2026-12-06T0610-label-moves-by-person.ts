import { sql, type Kysely } from 'kysely'

// Frozen in time: this file must never import application code, and never change once released.
//
// A prompt label moved by a signed-in person records who (docs/accounts.md): the console names
// them instead of a key prefix. Moves by keys keep moved_by_key_id; the person's row may go (their
// account is deleted), the move stays with a null mover.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table prompt_label_moves add column moved_by_user_id text references users (id) on delete set null`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table prompt_label_moves drop column if exists moved_by_user_id`.execute(db)
}
