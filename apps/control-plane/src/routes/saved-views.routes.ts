import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createSavedView, deleteSavedView, findSavedView, listSavedViews, rolesOnProject, setDefaultSavedView, updateSavedView, type Db } from '@tracewell/db'
import { ForbiddenError, NotFoundError } from '@tracewell/http'
import { effectiveProjectRole, roleAllows } from '@tracewell/policy'
import { authorize } from '../accounts/authorize.ts'
import { signedInPerson } from '../collaboration/signed-in-person.ts'
import { errorResponses, ViewBodySchema, ViewParamsSchema, ViewSchema } from '@tracewell/api-schemas'

// Saved views of the trace list (docs/collaboration.md#saved-views): its filters, columns and sort
// under a name, private to their owner or shared with the project, and a default view per person.
// The state is the console's to define (the trace list's query parameters, its column set): it is
// kept whole, bounded in size, and handed back as it came.

const ProjectQuerySchema = Type.Object({ project_id: Type.Optional(Type.String()) })

/** Sharing a view with the project needs views:share (members and up), on top of views:write. */
async function checkMayShare(db: Db, projectId: string, userId: string): Promise<void> {
  const roles = await rolesOnProject(db, projectId, userId)
  if (roles === undefined || !roleAllows(effectiveProjectRole(roles.teamRole, roles.projectRole), 'views:share')) {
    throw new ForbiddenError('Not allowed: sharing a view needs the permission views:share (docs/permissions.md)')
  }
}

export const savedViewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const tags = ['collaboration']
  const security = [{ apiKey: [] }]

  async function ownView(projectId: string, viewId: string, userId: string) {
    const view = await findSavedView(app.db, projectId, viewId, userId)
    if (view === undefined) throw new NotFoundError('View not found')
    if (view.owner.id !== userId) throw new ForbiddenError('Only its owner may change or delete a view')
    return view
  }

  app.get(
    '/api/views',
    {
      onRequest: authorize,
      config: { permission: 'views:write' },
      schema: { operationId: 'listViews', summary: 'The caller’s views and the project’s shared ones, by name', tags, security, querystring: ProjectQuerySchema, response: { 200: Type.Object({ views: Type.Array(ViewSchema) }), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => ({ views: await listSavedViews(app.db, request.controlPlaneProjectId as string, signedInPerson(request, 'Saved views').id) }),
  )

  app.post(
    '/api/views',
    {
      onRequest: authorize,
      config: { permission: 'views:write' },
      schema: { operationId: 'createView', summary: 'Save the trace list’s filters, columns and sort under a name', tags, security, querystring: ProjectQuerySchema, body: ViewBodySchema, response: { 201: ViewSchema, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      const person = signedInPerson(request, 'Saving views')
      const projectId = request.controlPlaneProjectId as string
      if (request.body.shared === true) await checkMayShare(app.db, projectId, person.id)
      const view = await createSavedView(app.db, projectId, person.id, { name: request.body.name, shared: request.body.shared ?? false, state: request.body.state })
      return reply.code(201).send(view)
    },
  )

  app.put(
    '/api/views/:viewId',
    {
      onRequest: authorize,
      config: { permission: 'views:write' },
      schema: { operationId: 'updateView', summary: 'Replace one’s own view', tags, security, params: ViewParamsSchema, querystring: ProjectQuerySchema, body: ViewBodySchema, response: { 200: ViewSchema, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => {
      const person = signedInPerson(request, 'Saving views')
      const projectId = request.controlPlaneProjectId as string
      await ownView(projectId, request.params.viewId, person.id)
      if (request.body.shared === true) await checkMayShare(app.db, projectId, person.id)
      await updateSavedView(app.db, projectId, request.params.viewId, { name: request.body.name, shared: request.body.shared ?? false, state: request.body.state })
      return (await findSavedView(app.db, projectId, request.params.viewId, person.id))!
    },
  )

  app.delete(
    '/api/views/:viewId',
    {
      onRequest: authorize,
      config: { permission: 'views:write' },
      schema: { operationId: 'deleteView', summary: 'Delete one’s own view', tags, security, params: ViewParamsSchema, querystring: ProjectQuerySchema, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      const person = signedInPerson(request, 'Deleting views')
      await ownView(request.controlPlaneProjectId as string, request.params.viewId, person.id)
      await deleteSavedView(app.db, request.controlPlaneProjectId as string, request.params.viewId)
      return reply.code(204).send(null)
    },
  )

  app.put(
    '/api/views/:viewId/default',
    {
      onRequest: authorize,
      config: { permission: 'views:write' },
      schema: { operationId: 'setDefaultView', summary: 'Make a view (one’s own or a shared one) the caller’s default in this project', tags, security, params: ViewParamsSchema, querystring: ProjectQuerySchema, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      const person = signedInPerson(request, 'Default views')
      const projectId = request.controlPlaneProjectId as string
      if ((await findSavedView(app.db, projectId, request.params.viewId, person.id)) === undefined) throw new NotFoundError('View not found')
      await setDefaultSavedView(app.db, projectId, person.id, request.params.viewId)
      return reply.code(204).send(null)
    },
  )

  app.delete(
    '/api/views/default',
    {
      onRequest: authorize,
      config: { permission: 'views:write' },
      schema: { operationId: 'clearDefaultView', summary: 'Go back to the plain trace list as the caller’s default', tags, security, querystring: ProjectQuerySchema, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      await setDefaultSavedView(app.db, request.controlPlaneProjectId as string, signedInPerson(request, 'Default views').id, null)
      return reply.code(204).send(null)
    },
  )
}
