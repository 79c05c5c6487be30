import { sql } from 'kysely'
import type { Executor } from './executor.ts'

// People (docs/accounts.md). Emails are compared without regard to case; the stored spelling is
// the one the person typed.

export interface UserDto {
  id: string
  email: string
  name: string
  emailVerified: boolean
  createdAt: string
}

/** A user with what signing in needs; never leaves the server. */
export interface UserCredentials extends UserDto {
  passwordHash: string | null
  passwordChangedAt: string | null
}

interface UserRow {
  id: string
  email: string
  name: string
  email_verified: boolean
  created_at: Date
  password_hash: string | null
  password_changed_at: Date | null
}

function toUserDto(row: UserRow): UserDto {
  return { id: row.id, email: row.email, name: row.name, emailVerified: row.email_verified, createdAt: row.created_at.toISOString() }
}

function toCredentials(row: UserRow): UserCredentials {
  return { ...toUserDto(row), passwordHash: row.password_hash, passwordChangedAt: row.password_changed_at?.toISOString() ?? null }
}

export interface NewUser {
  email: string
  name: string
  /** Argon2id PHC string (@tracewell/auth's hashPassword); null for single sign-on only. */
  passwordHash: string | null
  emailVerified: boolean
}

/** Creates a user; undefined when the email (in any case) is taken. */
export async function createUser(db: Executor, user: NewUser): Promise<UserDto | undefined> {
  const row = await db
    .insertInto('users')
    .values({ email: user.email, name: user.name, password_hash: user.passwordHash, email_verified: user.emailVerified })
    .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
    .returningAll()
    .executeTakeFirst()
  return row && toUserDto(row)
}

export async function findUserById(db: Executor, userId: string): Promise<UserDto | undefined> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst()
  return row && toUserDto(row)
}

/** The user with this email (in any case) and their password hash, for signing in. */
export async function findUserCredentialsByEmail(db: Executor, email: string): Promise<UserCredentials | undefined> {
  const row = await db.selectFrom('users').selectAll().where(sql`lower(email)`, '=', email.toLowerCase()).executeTakeFirst()
  return row && toCredentials(row)
}

export async function findUserCredentialsById(db: Executor, userId: string): Promise<UserCredentials | undefined> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst()
  return row && toCredentials(row)
}

export async function renameUser(db: Executor, userId: string, name: string): Promise<UserDto | undefined> {
  const row = await db.updateTable('users').set({ name, updated_at: sql`now()` }).where('id', '=', userId).returningAll().executeTakeFirst()
  return row && toUserDto(row)
}

/** Sets a new password hash and when it changed (sessions older than that are ended by the caller). */
export async function setUserPasswordHash(db: Executor, userId: string, passwordHash: string | null): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash, password_changed_at: sql`now()`, updated_at: sql`now()` }).where('id', '=', userId).execute()
}

export async function markUserEmailVerified(db: Executor, userId: string): Promise<void> {
  await db.updateTable('users').set({ email_verified: true, updated_at: sql`now()` }).where('id', '=', userId).execute()
}

/** Whether any person has an account yet (a fresh or upgraded install has none). */
export async function anyUserExists(db: Executor): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').limit(1).executeTakeFirst()
  return row !== undefined
}
