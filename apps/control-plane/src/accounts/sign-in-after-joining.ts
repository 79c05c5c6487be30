import type { UserDto } from '@tracewell/db'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Joined } from '@tracewell/api-schemas'

/**
 * Signs a person in who just made their account (an invitation, the setup link, an open sign-up):
 * they have proven who they are by making it. Where the server has no sessions (no SESSION_SECRET,
 * no console) the account is made and they sign in later through the API's keys.
 */
export async function signInAfterJoining(request: FastifyRequest, reply: FastifyReply, user: UserDto, teamId: string | null): Promise<Joined> {
  const sessions = request.server.userSessions
  if (sessions !== null) await sessions.start(request, reply, user.id)
  void reply.header('cache-control', 'no-store')
  return { user: { id: user.id, email: user.email, name: user.name }, teamId, signedIn: sessions !== null }
}
