import { Type, type Static } from '@sinclair/typebox'
import { IdSchema, type NamedResourceBody, NamedResourceBodySchema, ProjectSchema } from './common.schemas.ts'

// The shapes of the project routes (docs/api.md#teams-and-projects); a project's own shape is ProjectSchema (common.schemas.ts).

export const CreateProjectBodySchema = NamedResourceBodySchema
export type CreateProjectBody = NamedResourceBody

export const ProjectListSchema = Type.Object({ projects: Type.Array(ProjectSchema) })
export type ProjectList = Static<typeof ProjectListSchema>

export const ProjectParamsSchema = Type.Object({ projectId: IdSchema })
export type ProjectParams = Static<typeof ProjectParamsSchema>
