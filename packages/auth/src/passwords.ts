import { argon2, randomBytes, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'
import { passwordRules } from '@tracewell/policy'

// Passwords are hashed with Argon2id at OWASP's recommended minimum (19 MiB, 2 passes, 1 lane:
// https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html), by Node 24's
// own node:crypto argon2: no native addon to build. Stored as a PHC string, so parameters can be
// raised later and old hashes still verify.

const argon2Async = promisify(argon2)

const parameters = { memory: 19_456, passes: 2, parallelism: 1, tagLength: 32 }
const saltBytes = 16

export async function hashPassword(password: string): Promise<string> {
  const nonce = randomBytes(saltBytes)
  const tag = await argon2Async('argon2id', { message: password, nonce, ...parameters })
  return `$argon2id$v=19$m=${parameters.memory},t=${parameters.passes},p=${parameters.parallelism}$${nonce.toString('base64url')}$${tag.toString('base64url')}`
}

const phc = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/

/** Whether `password` matches the PHC string `hash`; false for a hash this code cannot read. */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const match = phc.exec(hash)
  if (match === null) return false
  const [, memory, passes, parallelism, nonce, expected] = match as unknown as [string, string, string, string, string, string]
  const expectedTag = Buffer.from(expected, 'base64url')
  const tag = await argon2Async('argon2id', {
    message: password,
    nonce: Buffer.from(nonce, 'base64url'),
    memory: Number(memory),
    passes: Number(passes),
    parallelism: Number(parallelism),
    tagLength: expectedTag.length,
  })
  return timingSafeEqual(tag, expectedTag)
}

let decoy: Promise<string> | undefined

/**
 * Spends the time a real check would for a person who does not exist (or has no password), so an
 * unknown email and a wrong password answer alike and in about the same time.
 */
export async function verifyDecoyPassword(password: string): Promise<false> {
  decoy ??= hashPassword(randomBytes(16).toString('base64url'))
  await verifyPassword(password, await decoy)
  return false
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string, context: { email?: string; name?: string } = {}): string | undefined {
  if (password.length < passwordRules.minLength) return `must be at least ${passwordRules.minLength} characters long`
  if (password.length > passwordRules.maxLength) return `must be at most ${passwordRules.maxLength} characters long`
  const lowered = password.toLowerCase()
  if (context.email !== undefined && lowered.includes(context.email.toLowerCase().split('@')[0] ?? '\u0000') && (context.email.split('@')[0]?.length ?? 0) >= 4) return 'must not contain your email address'
  if (/^(.)\1*$/.test(password)) return 'must not be one character repeated'
  return undefined
}
