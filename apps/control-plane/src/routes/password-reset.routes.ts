import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { hashPassword, newSecretToken, secretTokenHash } from '@tracewell/auth'
import {
  createPasswordReset,
  endUserSessions,
  findPasswordReset,
  findUserCredentialsByEmail,
  markUserEmailVerified,
  setUserPasswordHash,
  usePasswordResets,
  type Executor,
  type PasswordResetDto,
} from '@tracewell/db'
import { GoneError, NotFoundError, ServiceUnavailableError } from '@tracewell/http'
import type { Mailer } from '@tracewell/notifications'
import type { FastifyBaseLogger } from 'fastify'
import { consolePageUrl } from '../accounts/account-links.ts'
import { passwordResetMail } from '../accounts/account-mail.ts'
import { EmailSchema, errorResponses, IsoDateSchema, LinkTokenParamsSchema, MessageSchema, NewPasswordSchema } from '@tracewell/api-schemas'
import { authorize } from '../accounts/authorize.ts'
import { refusedPassword } from '../accounts/new-account.ts'
import { requireCsrfHeader } from '../console/csrf.ts'

// Forgotten passwords (docs/accounts.md#password-reset): a link by mail, valid for an hour, used
// once. Asking answers the same whether or not the email has an account, and the lookup and the
// mail happen after the answer, so neither its content nor its time tells (issue 44 §1). The link
// points at PUBLIC_URL only: an anonymous request's Host header is its sender's to choose, and a
// reset mail must never carry a link to the sender's server.

export const passwordResetLifetimeMs = 60 * 60 * 1000

/**
 * At most one reset mail a minute per account: asking is open to anyone, and must not become a
 * way to flood someone's mailbox. The answer stays the same either way.
 */
export const passwordResetMailIntervalMs = 60 * 1000

export interface PasswordResetRoutesOptions {
  mailer: Mailer | undefined
  publicUrl: string | undefined
}

export const passwordResetAskedMessage = 'If an account has this email, a link to choose a new password is on its way; it works for an hour.'

const tags = ['accounts']

/** 404 for a link that never was, 410 naming why one that was no longer works. */
async function usableReset(db: Executor, token: string, options: { forUpdate?: boolean } = {}): Promise<PasswordResetDto> {
  const reset = await findPasswordReset(db, secretTokenHash(token), options)
  if (reset === undefined) throw new NotFoundError('No such password reset link: check that the whole link was copied')
  if (reset.usedAt !== null) throw new GoneError('This password reset link was already used (or a newer one was asked for); ask for a new one')
  if (reset.expiresAt.getTime() <= Date.now()) throw new GoneError(`This password reset link expired at ${reset.expiresAt.toISOString()}; ask for a new one`)
  return reset
}

export const passwordResetRoutes: FastifyPluginAsyncTypebox<PasswordResetRoutesOptions> = async (app, options) => {
  const { mailer, publicUrl } = options

  async function mailResetLink(email: string, log: FastifyBaseLogger): Promise<void> {
    if (mailer === undefined || publicUrl === undefined) return
    const user = await findUserCredentialsByEmail(app.db, email)
    if (user === undefined) return
    const { token, tokenHash } = newSecretToken()
    const expiresAt = new Date(Date.now() + passwordResetLifetimeMs)
    if (!(await createPasswordReset(app.db, { tokenHash, userId: user.id, expiresAt }, passwordResetMailIntervalMs))) return
    const outcome = await mailer.send(passwordResetMail(user.email, { url: consolePageUrl(publicUrl, `/reset-password/${token}`), expiresAt }))
    if (!outcome.ok) log.warn({ userId: user.id, error: outcome.error }, 'password reset mail not sent')
  }

  app.post(
    '/api/auth/password-reset',
    {
      onRequest: [authorize, requireCsrfHeader],
      config: { permission: 'anyone' },
      schema: {
        operationId: 'askPasswordReset',
        summary: 'Mail a link to choose a new password',
        description: 'Answers 202 alike whether or not the email has an account. Needs SMTP_URL, MAIL_FROM and PUBLIC_URL on the server (503 without). Requires the x-tracewell-csrf: 1 header.',
        tags,
        security: [],
        body: Type.Object({ email: EmailSchema }, { additionalProperties: false }),
        response: { 202: MessageSchema, ...errorResponses(400, 403) },
      },
    },
    async (request, reply) => {
      if (mailer === undefined || publicUrl === undefined) {
        throw new ServiceUnavailableError('Password reset by mail needs SMTP_URL, MAIL_FROM and PUBLIC_URL set on the server; ask an admin of your team', 3600)
      }
      const log = request.log
      void mailResetLink(request.body.email, log).catch((error: unknown) => log.error({ err: error }, 'password reset failed'))
      return reply.code(202).send({ message: passwordResetAskedMessage })
    },
  )

  app.get(
    '/api/auth/password-reset/:token',
    {
      onRequest: authorize,
      config: { permission: 'anyone' },
      schema: {
        operationId: 'getPasswordReset',
        summary: 'Whether a password reset link still works',
        description: 'For the console page the link opens. 404 for an unknown link, 410 for one used or expired.',
        tags,
        security: [],
        params: LinkTokenParamsSchema,
        response: { 200: Type.Object({ email: Type.String(), expiresAt: IsoDateSchema }), ...errorResponses(400, 404, 410) },
      },
    },
    async (request, reply) => {
      const reset = await usableReset(app.db, request.params.token)
      void reply.header('cache-control', 'no-store')
      return { email: reset.email, expiresAt: reset.expiresAt.toISOString() }
    },
  )

  app.post(
    '/api/auth/password-reset/:token',
    {
      onRequest: [authorize, requireCsrfHeader],
      config: { permission: 'anyone' },
      schema: {
        operationId: 'resetPassword',
        summary: 'Choose a new password with a reset link',
        description: 'Sets the password, ends every session of the account (on every replica) and uses the link. Sign in afterwards. Requires the x-tracewell-csrf: 1 header.',
        tags,
        security: [],
        params: LinkTokenParamsSchema,
        body: Type.Object({ password: NewPasswordSchema }, { additionalProperties: false }),
        response: { 204: Type.Null({ description: 'the password is set' }), ...errorResponses(400, 403, 404, 410) },
      },
    },
    async (request, reply) => {
      const { password } = request.body
      await app.db.transaction().execute(async (trx) => {
        const reset = await usableReset(trx, request.params.token, { forUpdate: true })
        const refused = refusedPassword(password, { email: reset.email })
        if (refused) throw refused
        await setUserPasswordHash(trx, reset.userId, await hashPassword(password))
        await usePasswordResets(trx, reset.userId)
        await endUserSessions(trx, reset.userId)
        // The link came by mail to this address: the person holds the mailbox.
        await markUserEmailVerified(trx, reset.userId)
      })
      return reply.code(204).send(null)
    },
  )
}
