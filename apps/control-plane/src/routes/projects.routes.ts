import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createProject, findTeamProject, listTeamProjects, membershipsOf } from '@tracewell/db'
import { effectiveProjectRole } from '@tracewell/policy'
import { NotFoundError } from '@tracewell/http'
import { callerTeamId } from '../auth.ts'
import { authorize } from '../accounts/authorize.ts'
import { CreateProjectBodySchema, errorResponses, ProjectListSchema, ProjectParamsSchema, ProjectSchema } from '@tracewell/api-schemas'

/** Projects of the caller's team: a team key's, or the signed-in person's (those they may see). */
export const projectRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/api/projects',
    {
      onRequest: authorize,
      config: { permission: 'projects:create' },
      schema: {
        operationId: 'createProject',
        summary: 'Create a project in the caller’s team',
        tags: ['projects'],
        security: [{ apiKey: [] }],
        body: CreateProjectBodySchema,
        response: { 201: ProjectSchema, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const { name, description } = request.body
      const project = await createProject(app.db, { teamId: callerTeamId(request), name, ...(description === undefined ? {} : { description }) })
      return reply.code(201).send(project)
    },
  )

  app.get(
    '/api/projects',
    {
      onRequest: authorize,
      config: { permission: 'projects:read' },
      schema: {
        operationId: 'listProjects',
        summary: 'List the caller’s team’s projects (a person: those their role lets them see)',
        tags: ['projects'],
        security: [{ apiKey: [] }],
        response: { 200: ProjectListSchema, ...errorResponses(401) },
      },
    },
    async (request) => {
      const teamId = callerTeamId(request)
      const projects = await listTeamProjects(app.db, teamId)
      const principal = request.principal
      if (principal?.kind !== 'user') return { projects }
      // A person sees the projects their role does not hide (a project role of none does).
      const membership = (await membershipsOf(app.db, principal.user.id)).find((team) => team.teamId === teamId)
      if (membership === undefined) return { projects: [] }
      return { projects: projects.filter((project) => effectiveProjectRole(membership.role, membership.projectRoles[project.id]) !== 'none') }
    },
  )

  app.get(
    '/api/projects/:projectId',
    {
      onRequest: authorize,
      config: { permission: 'project:read' },
      schema: {
        operationId: 'getProject',
        summary: 'One project of the caller’s team',
        tags: ['projects'],
        security: [{ apiKey: [] }],
        params: ProjectParamsSchema,
        response: { 200: ProjectSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const project = await findTeamProject(app.db, callerTeamId(request), request.params.projectId)
      if (!project) throw new NotFoundError('Project not found')
      return project
    },
  )
}
