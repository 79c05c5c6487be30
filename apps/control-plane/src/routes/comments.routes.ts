import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  commentTargetExists,
  createComment,
  deleteComment,
  editComment,
  findComment,
  listComments,
  listTeamMembers,
  listUserNotifications,
  markUserNotificationsRead,
  notifyMentions,
  resolveThread,
  type CommentDto,
} from '@tracewell/db'
import { BadRequestError, ForbiddenError, NotFoundError } from '@tracewell/http'
import type { Mailer } from '@tracewell/notifications'
import { authorize } from '../accounts/authorize.ts'
import { mentionedUserIds, withPlainMentions } from '../collaboration/mentions.ts'
import { signedInPerson } from '../collaboration/signed-in-person.ts'
import { CommentBodySchema, CommentCreateQuerySchema, CommentListQuerySchema, CommentNotificationSchema, CommentParamsSchema, CommentPatchBodySchema, CommentSchema, errorResponses } from '@tracewell/api-schemas'

// Comments on a trace, a span, a session, a prompt version or a dataset item
// (docs/collaboration.md#comments). Markdown is stored as written and shown by the console
// through a renderer that allows no HTML; mentions must name members of the project's team.

const ProjectQuerySchema = Type.Object({ project_id: Type.Optional(Type.String()) })

type Comment = Static<typeof CommentSchema>
const asComment = (dto: CommentDto) => dto as Comment

interface Mentioned {
  userId: string
  email: string
}

/** The members a body mentions; a 400 naming anyone who is not a member of the team. */
async function checkedMentions(request: { server: { db: Parameters<typeof listTeamMembers>[0] }; teamId: string | null }, body: string): Promise<Mentioned[]> {
  const mentioned = mentionedUserIds(body)
  if (mentioned.length === 0) return []
  const members = new Map((await listTeamMembers(request.server.db, request.teamId as string)).map((member) => [member.userId, member.email]))
  const outsider = mentioned.find((userId) => !members.has(userId))
  if (outsider !== undefined) throw new BadRequestError(`body/body: mentions user ${outsider}, who is not a member of this project's team`)
  return mentioned.map((userId) => ({ userId, email: members.get(userId) as string }))
}

export interface CommentRoutesOptions {
  /** SMTP_URL and MAIL_FROM's mailer: mentioned people are also told by mail; undefined, in the console only. */
  mailer: Mailer | undefined
  /** PUBLIC_URL, for the link in the mail (else the console path alone). */
  publicUrl: string | undefined
}

/** Where the console shows what a comment is about. */
function consolePathOf(comment: CommentDto, projectId: string): string {
  const query = `?project_id=${encodeURIComponent(projectId)}`
  if (comment.objectType === 'trace') return `/traces/${comment.objectId}${query}`
  if (comment.objectType === 'session') return `/sessions/${encodeURIComponent(comment.objectId)}${query}`
  return `/traces${query}`
}

export const commentRoutes: FastifyPluginAsyncTypebox<CommentRoutesOptions> = async (app, options) => {
  /**
   * Tells the newly mentioned: in the console, and by mail where SMTP is set. The mail goes after
   * the answer (a slow mail server never holds the comment); a failure is logged.
   */
  async function tellMentioned(projectId: string, comment: CommentDto, authorName: string, mentioned: readonly Mentioned[]): Promise<void> {
    await notifyMentions(app.db, projectId, comment.id, mentioned.map((person) => person.userId))
    const mailer = options.mailer
    if (mailer === undefined || mentioned.length === 0) return
    const link = `${options.publicUrl?.replace(/\/+$/, '') ?? ''}${consolePathOf(comment, projectId)}`
    setImmediate(() => {
      for (const person of mentioned) {
        void mailer
          .send({ to: person.email, subject: `[Tracewell] ${authorName} mentioned you`, text: `${authorName} mentioned you in a comment:\n\n${withPlainMentions(comment.body)}\n\n${link}\n` })
          .then((outcome) => {
            if (!outcome.ok) app.log.warn({ commentId: comment.id, error: outcome.error }, 'mention mail not sent')
          })
      }
    })
  }

  app.get(
    '/api/comments',
    {
      onRequest: authorize,
      config: { permission: 'comments:read' },
      schema: {
        operationId: 'listComments',
        summary: 'The comments on a trace, span, session, prompt version or dataset item, oldest first',
        tags: ['collaboration'],
        security: [{ apiKey: [] }],
        querystring: CommentListQuerySchema,
        response: { 200: Type.Object({ comments: Type.Array(CommentSchema) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({ comments: (await listComments(app.db, request.controlPlaneProjectId as string, request.query.objectType, request.query.objectId)).map(asComment) }),
  )

  app.post(
    '/api/comments',
    {
      onRequest: authorize,
      config: { permission: 'comments:write' },
      schema: {
        operationId: 'createComment',
        summary: 'Comment on a trace, span, session, prompt version or dataset item, or reply to a thread',
        description: 'Members it mentions are notified in the console (and by email where SMTP is set).',
        tags: ['collaboration'],
        security: [{ apiKey: [] }],
        querystring: CommentCreateQuerySchema,
        body: CommentBodySchema,
        response: { 201: CommentSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const author = signedInPerson(request, 'Commenting')
      const projectId = request.controlPlaneProjectId as string
      const objectType = request.body.objectType ?? request.query.objectType
      const objectId = request.body.objectId ?? request.query.objectId
      if (objectType === undefined) throw new BadRequestError('body/objectType: required')
      if (objectId === undefined) throw new BadRequestError('body/objectId: required')
      let threadId: string | null = null
      if (request.body.threadId !== undefined) {
        const first = await findComment(app.db, projectId, request.body.threadId)
        if (first === undefined || first.objectType !== objectType || first.objectId !== objectId) throw new NotFoundError('Thread not found on this object')
        threadId = first.threadId ?? first.id
      } else if (!(await commentTargetExists(app.db, projectId, objectType, objectId))) {
        throw new NotFoundError(`The project has no ${objectType.replace('_', ' ')} ${objectId}`)
      }
      const mentioned = await checkedMentions(request, request.body.body)
      const comment = await createComment(app.db, { projectId, objectType, objectId, threadId, authorUserId: author.id, body: request.body.body, mentions: mentioned.map((person) => person.userId) })
      await tellMentioned(projectId, comment, author.name, mentioned.filter((person) => person.userId !== author.id))
      return reply.code(201).send(asComment(comment))
    },
  )

  app.patch(
    '/api/comments/:commentId',
    {
      onRequest: authorize,
      config: { permission: 'comments:write' },
      schema: {
        operationId: 'updateComment',
        summary: 'Edit one’s own comment, or resolve or reopen a thread',
        tags: ['collaboration'],
        security: [{ apiKey: [] }],
        params: CommentParamsSchema,
        querystring: ProjectQuerySchema,
        body: CommentPatchBodySchema,
        response: { 200: CommentSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const person = signedInPerson(request, 'Editing comments')
      const projectId = request.controlPlaneProjectId as string
      const comment = await findComment(app.db, projectId, request.params.commentId)
      if (comment === undefined) throw new NotFoundError('Comment not found')
      if (request.body.body !== undefined) {
        if (comment.author?.id !== person.id) throw new ForbiddenError('Only its author may edit a comment')
        const mentioned = await checkedMentions(request, request.body.body)
        await editComment(app.db, projectId, comment.id, { body: request.body.body, mentions: mentioned.map((someone) => someone.userId) })
        const edited = { ...comment, body: request.body.body }
        await tellMentioned(projectId, edited, person.name, mentioned.filter((someone) => someone.userId !== person.id && !comment.mentions.includes(someone.userId)))
      }
      if (request.body.resolved !== undefined) {
        if (comment.threadId !== null) throw new BadRequestError('body/resolved: only the first comment of a thread is resolved')
        await resolveThread(app.db, projectId, comment.id, request.body.resolved ? person.id : null)
      }
      return asComment((await findComment(app.db, projectId, comment.id)) as CommentDto)
    },
  )

  app.delete(
    '/api/comments/:commentId',
    {
      onRequest: authorize,
      config: { permission: 'comments:write' },
      schema: {
        operationId: 'deleteComment',
        summary: 'Delete one’s own comment (a first comment with its replies)',
        tags: ['collaboration'],
        security: [{ apiKey: [] }],
        params: CommentParamsSchema,
        querystring: ProjectQuerySchema,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const person = signedInPerson(request, 'Deleting comments')
      const projectId = request.controlPlaneProjectId as string
      const comment = await findComment(app.db, projectId, request.params.commentId)
      if (comment === undefined) throw new NotFoundError('Comment not found')
      if (comment.author?.id !== person.id) throw new ForbiddenError('Only its author may delete a comment')
      await deleteComment(app.db, projectId, comment.id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/notifications',
    {
      onRequest: authorize,
      config: { permission: 'signed-in' },
      schema: {
        operationId: 'listNotifications',
        security: [{ userSession: [] }],
        summary: 'The signed-in person’s notifications (mentions), newest first (the last 100)',
        tags: ['collaboration'],
        response: { 200: Type.Object({ notifications: Type.Array(CommentNotificationSchema) }), ...errorResponses(401, 403) },
      },
    },
    async (request) => ({ notifications: (await listUserNotifications(app.db, signedInPerson(request, 'Notifications').id)) as Static<typeof CommentNotificationSchema>[] }),
  )

  app.post(
    '/api/notifications/read',
    {
      onRequest: authorize,
      config: { permission: 'signed-in' },
      schema: {
        operationId: 'markNotificationsRead',
        security: [{ userSession: [] }],
        summary: 'Mark notifications read',
        tags: ['collaboration'],
        body: Type.Object({ ids: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 }) }, { additionalProperties: false }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      await markUserNotificationsRead(app.db, signedInPerson(request, 'Notifications').id, request.body.ids)
      return reply.code(204).send(null)
    },
  )
}
