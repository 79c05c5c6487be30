import { Type, type Static } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createProject, findTeamProject, listTeamProjects } from '@tracewell/db'
import { NotFoundError } from '@tracewell/http'
import { callerTeamId, requireTeamKey } from '../auth.ts'
import { errorResponses, IdSchema, NamedResourceBodySchema, type NamedResourceBody, ProjectSchema } from '../schemas.ts'

export const CreateProjectBodySchema = NamedResourceBodySchema
export type CreateProjectBody = NamedResourceBody

export const ProjectListSchema = Type.Object({ projects: Type.Array(ProjectSchema) })
export type ProjectList = Static<typeof ProjectListSchema>

export const ProjectParamsSchema = Type.Object({ projectId: IdSchema })
export type ProjectParams = Static<typeof ProjectParamsSchema>

/** Projects of the caller's team (team key). */
export const projectRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/api/projects',
    {
      onRequest: requireTeamKey,
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
      onRequest: requireTeamKey,
      schema: {
        operationId: 'listProjects',
        summary: 'List the caller’s team’s projects',
        tags: ['projects'],
        security: [{ apiKey: [] }],
        response: { 200: ProjectListSchema, ...errorResponses(401) },
      },
    },
    async (request) => ({ projects: await listTeamProjects(app.db, callerTeamId(request)) }),
  )

  app.get(
    '/api/projects/:projectId',
    {
      onRequest: requireTeamKey,
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
