import { Type, type Static } from '@sinclair/typebox'
import { IdSchema, IsoDateSchema } from './common.schemas.ts'

// The shapes of a project's own model prices (docs/api.md#model-prices).

const Usd = (description: string) => Type.Number({ minimum: 0, maximum: 1_000_000, description })
const NullableUsd = (description: string) => Type.Union([Usd(description), Type.Null()])

export const ModelPriceSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  model: Type.String(),
  match: Type.Union([Type.Literal('exact'), Type.Literal('glob')]),
  usdPerMillionTokens: Type.Object({
    input: Type.Number(),
    output: Type.Number(),
    cacheRead: Type.Union([Type.Number(), Type.Null()], { description: 'null: cache reads are priced as input' }),
    cacheWrite: Type.Union([Type.Number(), Type.Null()], { description: 'null: cache writes are priced as input' }),
    reasoning: Type.Union([Type.Number(), Type.Null()], { description: 'null: reasoning tokens are priced as output' }),
  }),
  effectiveFrom: Type.Union([IsoDateSchema, Type.Null()], { description: 'applies to spans started at or after; null: to every span' }),
  createdAt: IsoDateSchema,
})
export type ModelPrice = Static<typeof ModelPriceSchema>

export const ModelPriceListSchema = Type.Object({ modelPrices: Type.Array(ModelPriceSchema) })
export type ModelPriceList = Static<typeof ModelPriceListSchema>

export const ModelPriceBodySchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200, description: 'the model name, or a glob pattern when match is "glob"' }),
    match: Type.Optional(
      Type.Union([Type.Literal('exact'), Type.Literal('glob')], {
        default: 'exact',
        description: 'exact: the whole name, case-insensitive; glob: * is any run of characters, ? one character (case-insensitive)',
      }),
    ),
    usdPerMillionTokens: Type.Object(
      {
        input: Usd('USD per million input tokens'),
        output: Usd('USD per million output tokens'),
        cacheRead: Type.Optional(NullableUsd('USD per million input tokens read from the prompt cache (default: the input price)')),
        cacheWrite: Type.Optional(NullableUsd('USD per million input tokens written to the prompt cache (default: the input price)')),
        reasoning: Type.Optional(NullableUsd('USD per million reasoning tokens (default: the output price)')),
      },
      { additionalProperties: false },
    ),
    effectiveFrom: Type.Optional(Type.Union([IsoDateSchema, Type.Null()], { description: 'ISO 8601; omitted or null: applies to every span' })),
  },
  { additionalProperties: false },
)
export type ModelPriceBody = Static<typeof ModelPriceBodySchema>

export const ModelPriceParamsSchema = Type.Object({ projectId: IdSchema, priceId: IdSchema })
export type ModelPriceParams = Static<typeof ModelPriceParamsSchema>
