import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema } from './common.schemas.ts'

// The shapes of scores and score configurations, shared by the score routes, the trace routes
// (a trace's scores) and the Langtrace feedback route.

const NullableString = Type.Union([Type.String(), Type.Null()])
// Enums rather than unions of literals: a wrong value is then refused as "must be equal to one of
// the allowed values", not as a mismatch with the last literal tried.
export const stringEnum = <const T extends string>(values: readonly T[], description: string) => Type.Unsafe<T>({ type: 'string', enum: [...values], description })
export const ScoreDataTypeSchema = stringEnum(['numeric', 'boolean', 'categorical'], 'numeric, boolean or categorical')
export const ScoreSourceSchema = stringEnum(
  ['api', 'annotation', 'eval'],
  'api: sent by an application or SDK; annotation: given by a person in the console; eval: an LLM judge’s',
)

export const ScoreSchema = Type.Object({
  id: Type.String(),
  traceId: NullableString,
  spanId: Type.Union([Type.String(), Type.Null()], { description: 'null: the score is about the whole trace (or session)' }),
  sessionId: NullableString,
  name: Type.String(),
  dataType: ScoreDataTypeSchema,
  value: Type.Union([Type.Number(), Type.Boolean(), Type.String()], { description: 'a number, true/false, or the category’s label' }),
  numericValue: Type.Union([Type.Number(), Type.Null()], { description: 'what averages and min_score/max_score read: the number, 1/0, or the category’s configured value' }),
  comment: NullableString,
  source: ScoreSourceSchema,
  author: Type.Union([Type.String(), Type.Null()], { description: 'who gave it: as sent, else `key:<api key id>`, or `evaluator:<id>`' }),
  configId: Type.Union([Type.String(), Type.Null()], { description: 'the score configuration it was checked against' }),
  evaluatorId: Type.Union([Type.String(), Type.Null()], { description: 'the LLM judge that gave it (source eval)' }),
  evaluatorName: Type.Union([Type.String(), Type.Null()], { description: 'that evaluator’s name (null when no evaluator gave it, or it was deleted)' }),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})
export type Score = Static<typeof ScoreSchema>

export const ScoreCategorySchema = Type.Object(
  { label: Type.String({ minLength: 1, maxLength: 200 }), value: Type.Number({ description: 'the number averages use' }) },
  { additionalProperties: false },
)

export const ScoreConfigSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  name: Type.String(),
  dataType: ScoreDataTypeSchema,
  minValue: Type.Union([Type.Number(), Type.Null()]),
  maxValue: Type.Union([Type.Number(), Type.Null()]),
  categories: Type.Union([Type.Array(ScoreCategorySchema), Type.Null()]),
  description: Type.String(),
  createdAt: IsoDateSchema,
})

export const ScoreNameSchema = Type.String({ minLength: 1, maxLength: 200, pattern: '^\\S(.*\\S)?$', description: 'no leading or trailing space' })

export const ScoreConfigBodySchema = Type.Object(
  {
    name: ScoreNameSchema,
    dataType: ScoreDataTypeSchema,
    minValue: Type.Optional(Type.Number({ description: 'numeric only: the lowest value allowed' })),
    maxValue: Type.Optional(Type.Number({ description: 'numeric only: the highest value allowed' })),
    categories: Type.Optional(Type.Array(ScoreCategorySchema, { minItems: 1, maxItems: 100, description: 'categorical only (required): the labels allowed, each with its number' })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
)
export type ScoreConfigBody = Static<typeof ScoreConfigBodySchema>
