import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { verifyPassword } from '@tracewell/auth'
import { findUserCredentialsByEmail, sql } from '@tracewell/db'
import { startSmtpReceiver, type SmtpReceiver } from '@tracewell/test-support'
import { csrf, eventually, mailText, seedTeam, sessionCookieOf, signedInPerson, type SignedInPerson } from './people.helper.ts'
import { startControlPlane, type TestControlPlane } from './helper.ts'

const sessionSecret = 'session-secret-for-tests-0123456789abcdef'
const publicUrl = 'https://tracewell.example.com'
const newPassword = 'a brand new passphrase'
const asked = { message: 'If an account has this email, a link to choose a new password is on its way; it works for an hour.' }

describe('password reset', () => {
  let cp: TestControlPlane
  let smtp: SmtpReceiver
  let person: SignedInPerson
  let teamId: string

  before(async () => {
    smtp = await startSmtpReceiver()
    cp = await startControlPlane({ SESSION_SECRET: sessionSecret, SMTP_URL: smtp.url, MAIL_FROM: 'tracewell@example.com', PUBLIC_URL: publicUrl })
    ;({ teamId } = await seedTeam(cp.db, 'Acme'))
    person = await signedInPerson(cp.db, teamId, 'member', 'Forgetful Fay')
  })
  after(async () => {
    await cp?.close()
    await smtp?.close()
  })

  const ask = (email: string, headers: Record<string, string> = csrf) => cp.app.inject({ method: 'POST', url: '/api/auth/password-reset', headers, payload: { email } })
  /** Ages the links asked for so far past the one-mail-a-minute bound, so that a test may ask again. */
  const aMinuteLater = () => sql`update password_resets set created_at = created_at - interval '61 seconds'`.execute(cp.db)
  const reset = (token: string, password: string) => cp.app.inject({ method: 'POST', url: `/api/auth/password-reset/${token}`, headers: csrf, payload: { password } })

  /** The token of the newest reset mail to `to`, once it has arrived. */
  async function mailedToken(to: string, after: number): Promise<string> {
    const mails = await eventually(() => smtp.mails.slice(after).filter((mail) => mail.to.includes(to)), (found) => found.length > 0, `a reset mail to ${to}`)
    const text = mailText(mails.at(-1)?.data ?? '')
    assert.match(text, /Subject: \[Tracewell\] Reset your password/)
    const link = /Choose a new password: (\S+)/.exec(text)?.[1] ?? ''
    assert.match(link, /^https:\/\/tracewell\.example\.com\/reset-password\/[A-Za-z0-9_-]{43}$/, 'the link is on PUBLIC_URL, whatever Host the request named')
    return link.split('/reset-password/')[1] as string
  }

  it('answers alike for a known and an unknown email, and mails only the known one', async () => {
    const before = smtp.mails.length
    const unknown = await ask('nobody@example.com')
    const known = await ask(person.email.toUpperCase(), { ...csrf, host: 'attacker.example' })
    assert.deepEqual([known.statusCode, known.json()], [202, asked])
    assert.deepEqual([unknown.statusCode, unknown.json()], [202, asked])
    const token = await mailedToken(person.email, before)
    // The unknown email was asked for first, and its lookup is all it does: by the time the known one's mail arrived, nothing went to it.
    assert.deepEqual(smtp.mails.slice(before).flatMap((mail) => mail.to), [person.email])
    assert.deepEqual((await cp.app.inject({ url: `/api/auth/password-reset/${token}` })).json().email, person.email)
  })

  it('sets the new password once, ends every session, and refuses the link after', async () => {
    await aMinuteLater()
    const before = smtp.mails.length
    assert.equal((await ask(person.email)).statusCode, 202)
    const token = await mailedToken(person.email, before)
    const otherSession = await sessionCookieOf(cp.db, person.id)

    const weak = await reset(token, 'short')
    assert.deepEqual([weak.statusCode, weak.json()], [400, { message: 'body/password: must be at least 12 characters long' }])
    const done = await reset(token, newPassword)
    assert.equal(done.statusCode, 204, done.body)
    const credentials = await findUserCredentialsByEmail(cp.db, person.email)
    assert.ok(await verifyPassword(newPassword, credentials?.passwordHash ?? ''))
    for (const cookie of [person.cookie, otherSession]) {
      assert.equal((await cp.app.inject({ url: `/api/teams/${teamId}/members`, headers: { cookie } })).statusCode, 401, 'every session ended')
    }
    const again = await reset(token, 'yet another passphrase')
    assert.deepEqual([again.statusCode, again.json()], [410, { message: 'This password reset link was already used (or a newer one was asked for); ask for a new one' }])
    assert.ok(await verifyPassword(newPassword, (await findUserCredentialsByEmail(cp.db, person.email))?.passwordHash ?? ''), 'unchanged by the refused use')
  })

  it('keeps only the newest link, refuses an expired or unknown one, and requires the CSRF header', async () => {
    await aMinuteLater()
    const first = smtp.mails.length
    await ask(person.email)
    const older = await mailedToken(person.email, first)
    await aMinuteLater()
    const second = smtp.mails.length
    await ask(person.email)
    const newer = await mailedToken(person.email, second)
    assert.equal((await reset(older, newPassword)).statusCode, 404, 'asking again forgets the earlier link')

    await sql`update password_resets set expires_at = now() - interval '1 second'`.execute(cp.db)
    const expired = await reset(newer, newPassword)
    assert.equal(expired.statusCode, 410)
    assert.match(expired.json().message, /^This password reset link expired at .+; ask for a new one$/)
    assert.deepEqual((await reset('B'.repeat(43), newPassword)).json(), { message: 'No such password reset link: check that the whole link was copied' })

    const noCsrf = await ask(person.email, {})
    assert.equal(noCsrf.statusCode, 403)
    const badEmail = await ask('not an email')
    assert.equal(badEmail.statusCode, 400)
  })
})

describe('password reset asked for again and again', () => {
  let cp: TestControlPlane
  let smtp: SmtpReceiver
  before(async () => {
    smtp = await startSmtpReceiver()
    cp = await startControlPlane({ SESSION_SECRET: sessionSecret, SMTP_URL: smtp.url, MAIL_FROM: 'tracewell@example.com', PUBLIC_URL: publicUrl })
  })
  after(async () => {
    await cp?.close()
    await smtp?.close()
  })

  it('mails at most once a minute per account, answering alike', async () => {
    const person = await signedInPerson(cp.db, null, 'viewer', 'Flooded Flo')
    // Together, as a script would send them: their lookups race, and the person's row lock makes one win.
    const asks = await Promise.all(Array.from({ length: 5 }, () => cp.app.inject({ method: 'POST', url: '/api/auth/password-reset', headers: csrf, payload: { email: person.email } })))
    assert.deepEqual(asks.map((response) => [response.statusCode, response.json()]), Array.from({ length: 5 }, () => [202, asked]))
    await eventually(() => smtp.mails.length, (count) => count > 0, 'the first reset mail')
    // The later asks find the first one's row under the lock and store nothing: one row, one mail.
    const rows = await sql<{ count: string }>`select count(*) from password_resets where user_id = ${person.id}`.execute(cp.db)
    assert.equal(Number(rows.rows[0]?.count), 1)
    assert.equal(smtp.mails.length, 1)
  })
})

describe('password reset without SMTP', () => {
  let cp: TestControlPlane
  before(async () => {
    cp = await startControlPlane({ SESSION_SECRET: sessionSecret })
  })
  after(() => cp?.close())

  it('says what the server lacks', async () => {
    const response = await cp.app.inject({ method: 'POST', url: '/api/auth/password-reset', headers: csrf, payload: { email: 'someone@example.com' } })
    assert.deepEqual([response.statusCode, response.json()], [503, { message: 'Password reset by mail needs SMTP_URL, MAIL_FROM and PUBLIC_URL set on the server; ask an admin of your team' }])
  })
})
