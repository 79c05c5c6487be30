import { Type } from '@sinclair/typebox'
import { IdSchema, IsoDateSchema, LabelNameSchema } from './common.schemas.ts'
import { DatasetItemIdSchema } from './dataset.schemas.ts'

// The shapes of the experiment routes (docs/api.md#experiments).

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])
const TraceIdSchema = Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: '32 hex characters' })
const SpanIdSchema = Type.String({ pattern: '^[0-9a-fA-F]{16}$', description: '16 hex characters' })

export const CreateExperimentBodySchema = Type.Object(
  {
    datasetId: IdSchema,
    datasetVersion: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'the dataset version to run over (default: the current one)' })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'default: "<registry> v<version> · <model>", or "SDK run <time>"' })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    promptsetId: Type.Optional({ ...IdSchema, description: 'the prompt registry whose version is run; without it the experiment is run by your code (an SDK experiment): POST its results' }),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'the prompt version (or label; neither: the production label)' })),
    label: Type.Optional(LabelNameSchema),
    connectionId: Type.Optional({ ...IdSchema, description: 'the LLM connection the prompt is sent through (required with promptsetId)' }),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the model, as the connection’s API names it (default: the prompt version’s model)' })),
    modelSettings: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'over the prompt version’s own settings: temperature, max_tokens, …' })),
    evaluatorIds: Type.Optional(Type.Array(IdSchema, { maxItems: 20, uniqueItems: true, description: 'evaluators of the project that judge each output (their prompts may use {{expected_output}})' })),
  },
  { additionalProperties: false },
)

const ScoreAggregateSchema = Type.Object({ name: Type.String(), avg: Nullable(Type.Number()), count: Type.Integer() })

export const ExperimentAggregatesSchema = Type.Object({
  results: Type.Object({ total: Type.Integer(), pending: Type.Integer(), completed: Type.Integer(), failed: Type.Integer() }),
  latencyMs: Type.Object({ avg: Nullable(Type.Number()), p50: Nullable(Type.Number()), p95: Nullable(Type.Number()) }, { description: 'of the completed results' }),
  inputTokens: Type.Integer(),
  outputTokens: Type.Integer(),
  costUsd: Nullable(Type.Number({ description: 'of the results whose cost is known' })),
  scores: Type.Array(ScoreAggregateSchema, { description: 'the scores on the results’ traces, averaged by name' }),
})

export const ExperimentSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  datasetId: Type.String(),
  datasetVersion: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  kind: Type.Union([Type.Literal('prompt'), Type.Literal('sdk')]),
  promptsetId: Nullable(Type.String()),
  promptVersion: Nullable(Type.Integer()),
  connectionId: Nullable(Type.String()),
  model: Nullable(Type.String()),
  modelSettings: Type.Record(Type.String(), Type.Unknown()),
  evaluatorIds: Type.Array(Type.String()),
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('external')], {
    description: 'external: an SDK experiment, whose results its caller posts',
  }),
  itemCount: Type.Integer({ description: 'items in the dataset version' }),
  traceFilter: Type.String({ description: 'GET /api/traces’s query that lists its traces (prompt experiments): its attr filter, and include_tracewell_calls=true since they are Tracewell’s own' }),
  aggregates: ExperimentAggregatesSchema,
  createdAt: IsoDateSchema,
  finishedAt: Nullable(IsoDateSchema),
})

const ResultScoreSchema = Type.Object({ name: Type.String(), value: Nullable(Type.Number()), stringValue: Nullable(Type.String()), comment: Nullable(Type.String()), source: Type.String() })

export const ExperimentResultSchema = Type.Object({
  id: Type.String(),
  datasetItemId: Type.String(),
  input: Type.Unknown({ description: 'the item’s input, in the experiment’s dataset version' }),
  expectedOutput: Type.Unknown(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('completed'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  error: Nullable(Type.String()),
  output: Type.Unknown({ description: 'the answer’s text, or {content, toolCalls}; null until run' }),
  traceId: Nullable(Type.String()),
  spanId: Nullable(Type.String()),
  model: Nullable(Type.String()),
  inputTokens: Nullable(Type.Integer()),
  outputTokens: Nullable(Type.Integer()),
  costUsd: Nullable(Type.Number()),
  latencyMs: Nullable(Type.Integer()),
  scores: Type.Array(ResultScoreSchema),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})

export const ExperimentWithResultsSchema = Type.Composite([ExperimentSchema, Type.Object({ results: Type.Array(ExperimentResultSchema, { description: 'one per item, in the dataset’s order' }) })])

export const ExternalResultBodySchema = Type.Object(
  {
    datasetItemId: DatasetItemIdSchema,
    traceId: TraceIdSchema,
    spanId: Type.Optional(SpanIdSchema),
    output: Type.Optional(Type.Unknown({ description: 'what your code answered (default null)' })),
    latencyMs: Type.Optional(Type.Integer({ minimum: 0, description: 'default: the trace’s duration, once it has arrived' })),
    model: Type.Optional(Type.String({ maxLength: 200 })),
    inputTokens: Type.Optional(Type.Integer({ minimum: 0 })),
    outputTokens: Type.Optional(Type.Integer({ minimum: 0 })),
    costUsd: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
)

export const ExternalResultsBodySchema = Type.Object(
  { results: Type.Array(ExternalResultBodySchema, { minItems: 1, maxItems: 1_000 }) },
  { additionalProperties: false, description: 'results of an SDK experiment: each links one of your traces to a dataset item' },
)
