import { presentedApiKey, type KeyKind, type VerifiedKey } from '@tracewell/auth'
import { keyAllows, type Permission } from '@tracewell/policy'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ForbiddenError, UnauthorizedError } from '../errors.ts'
import { answerFailedKey, verifyPresentedKey } from './api-keys.plugin.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified key of the request; set by a `requireKey` hook. */
    apiKey: VerifiedKey | null
  }
}

/** Makes `request.apiKey` known to every route; `requireKey` hooks fill it in. */
export const authPlugin = fp(
  async (app) => {
    app.decorateRequest('apiKey', null)
  },
  { name: 'auth', fastify: '5.x', dependencies: ['api-keys'] },
)

export interface RequireKeyOptions {
  /** The 401's message: each API keeps its own wording. */
  unauthorized: string
  /**
   * Who the caller is when no key is presented (the web console's session cookie stands for its
   * team key); null or undefined when nobody. Its rejection is the request's error.
   */
  withoutKey?(request: FastifyRequest): Promise<VerifiedKey | null> | null
  /** What a project key's scopes must allow (@tracewell/policy's keyAllows): ingest needs traces:ingest. 403 otherwise. */
  permission?: Permission
}

/** A 403 for a project key whose scopes do not allow `permission` (@tracewell/policy); undefined when they do. */
export function scopeRefusal(key: VerifiedKey, permission: Permission): Error | undefined {
  if (key.kind !== 'project' || keyAllows(key.scopes, permission)) return undefined
  return new ForbiddenError(`Not allowed: this key's scopes (${key.scopes?.join(', ') ?? ''}) do not include what ${permission} needs (docs/permissions.md)`)
}

/**
 * An onRequest hook admitting only keys of `kind` (`x-api-key`, or `Authorization: Bearer`): it
 * runs before the body is read, so an unauthenticated request costs no parsing. A key of the
 * wrong kind is an invalid key for the route; a key store that cannot be reached is a 503 with
 * Retry-After (lookUpKey), never a 401 or a 500. An unknown key's 401 is slowed per client
 * address once it has failed a few times (answerFailedKey); a correct key is never held back. A callback hook, not an async one: a key verified
 * a moment ago is admitted without a promise and a turn of the microtask queue, a measurable
 * share of a small request.
 */
export function requireKey(kind: KeyKind, options: RequireKeyOptions) {
  const admit = (request: FastifyRequest, key: VerifiedKey | null): Error | undefined => {
    if (key === null || key.kind !== kind) return new UnauthorizedError(options.unauthorized)
    const refusal = options.permission === undefined ? undefined : scopeRefusal(key, options.permission)
    if (refusal) return refusal
    request.apiKey = key
    return undefined
  }
  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
    const secret = presentedApiKey(request.headers)
    if (secret === undefined) {
      const pending = options.withoutKey?.(request) ?? null
      if (pending === null) return done(admit(request, null))
      pending.then((caller) => done(admit(request, caller)), done)
      return
    }
    // A secret that is no key at all is a guess: its 401 waits its turn (answerFailedKey). A
    // key of the wrong kind is a mistake, not a guess, and is answered at once.
    const refuseGuess = () => answerFailedKey(request.server, request.ip).then(() => done(admit(request, null)), done)
    const key = verifyPresentedKey(request.server, secret, request.log)
    if (!(key instanceof Promise)) return key === null ? void refuseGuess() : done(admit(request, key))
    key.then((verified) => (verified === null ? void refuseGuess() : done(admit(request, verified))), done)
  }
}
