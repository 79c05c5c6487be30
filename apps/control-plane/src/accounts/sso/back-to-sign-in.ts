import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'

// A person who comes back from an identity provider is in a browser tab, not an API client: a
// refused sign-in sends them to the console's sign-in page with the reason, where they can try
// again, instead of showing them a JSON body. Callers that ask for JSON (tests, scripts) keep the
// documented 4xx and 5xx answers.

type ErrorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown

/** The console path a failed sign-in lands on, with its reason. */
export const signInPageWithError = (reason: string) => `/sign-in?sso_error=${encodeURIComponent(reason)}`

/** A route's errorHandler: a browser goes back to the sign-in page, anything else gets `fallback`. */
export function backToSignInOnFailure(fallback: () => ErrorHandler): ErrorHandler {
  return (error, request, reply) => {
    if (!(request.headers.accept ?? '').includes('text/html')) return fallback()(error, request, reply)
    const status = error.statusCode ?? 500
    if (status >= 500) request.log.error({ err: error }, 'single sign-on failed')
    // A 503 names the unreachable provider; other 5xx are ours and say nothing a person can use.
    const reason = status < 500 || status === 503 ? error.message : 'The sign-in failed on the server; try again, or ask an admin to read its log'
    void reply.header('cache-control', 'no-store')
    return reply.redirect(signInPageWithError(reason), 303)
  }
}
