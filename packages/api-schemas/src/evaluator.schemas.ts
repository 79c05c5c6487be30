import { Type, type Static } from '@sinclair/typebox'
import { IdSchema, IsoDateSchema, LabelNameSchema } from './common.schemas.ts'
import { ScoreNameSchema } from './score.schemas.ts'
import { TraceFilterBodySchema } from './trace-filter.schemas.ts'

// The shapes of the evaluator routes (docs/api.md#llm-as-judge-evaluators): LLM judges, their runs and judgments.

const PromptRefSchema = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200, description: 'a prompt registry of the project, by name' }), label: Type.Optional(LabelNameSchema) },
  { additionalProperties: false, description: 'the version the label (default production) points at; its text is the template' },
)

const ReviewQueueSchema = Type.Object(
  {
    queueId: IdSchema,
    below: Type.Number({ description: 'a trace scored below this goes to the queue' }),
  },
  { additionalProperties: false, description: 'an annotation queue of the project that gets the traces this evaluator scores low, for people to review' },
)

export const EvaluatorBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    connectionId: IdSchema,
    model: Type.String({ minLength: 1, maxLength: 200, description: 'the judge model, as the connection’s API names it' }),
    prompt: Type.Union([Type.String({ minLength: 1, maxLength: 50_000 }), PromptRefSchema], {
      description: 'a template over {{input}} and {{output}} (the trace’s), or a registry prompt by name and label',
    }),
    scoreName: ScoreNameSchema,
    filter: Type.Optional(TraceFilterBodySchema),
    samplingRate: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'the share of matching new traces judged (default 1); on-demand runs judge every match' })),
    enabled: Type.Optional(Type.Boolean({ description: 'judge new traces (default true); runs work either way' })),
    reviewQueue: Type.Optional(ReviewQueueSchema),
  },
  { additionalProperties: false },
)
export type EvaluatorBody = Static<typeof EvaluatorBodySchema>

const JudgmentCountsSchema = Type.Object({ pending: Type.Integer(), completed: Type.Integer(), failed: Type.Integer(), skipped: Type.Integer() })

export const EvaluatorSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  name: Type.String(),
  connectionId: Type.String(),
  model: Type.String(),
  prompt: Type.Union([Type.String(), Type.Null()]),
  promptRef: Type.Union([Type.Object({ name: Type.String(), label: Type.String() }), Type.Null()]),
  scoreName: Type.String(),
  filter: Type.Record(Type.String(), Type.Unknown()),
  samplingRate: Type.Number(),
  enabled: Type.Boolean(),
  reviewQueue: Type.Union([ReviewQueueSchema, Type.Null()]),
  judgments: Type.Composite([JudgmentCountsSchema], { description: 'skipped: left out by sampling, or nothing to judge in the trace' }),
  judge: Type.Object({ inputTokens: Type.Integer(), outputTokens: Type.Integer(), costUsd: Type.Union([Type.Number(), Type.Null()]) }, { description: 'what the judge calls used, in total' }),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})

export const RunSchema = Type.Object({
  id: Type.String(),
  evaluatorId: Type.String(),
  from: IsoDateSchema,
  to: IsoDateSchema,
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed')]),
  traceCount: Type.Union([Type.Integer(), Type.Null()], { description: 'the traces it judges, once started' }),
  judgments: JudgmentCountsSchema,
  createdAt: IsoDateSchema,
  finishedAt: Type.Union([IsoDateSchema, Type.Null()]),
})

export const JudgmentSchema = Type.Object({
  id: Type.String(),
  evaluatorId: Type.String(),
  runId: Type.Union([Type.String(), Type.Null()], { description: 'null: a new trace' }),
  traceId: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('completed'), Type.Literal('failed'), Type.Literal('skipped')]),
  attempts: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()], { description: 'the last failed attempt’s error (cleared when one succeeds)' }),
  skipReason: Type.Union([Type.String(), Type.Null()], { description: 'why a skipped judgment was skipped: not sampled, or the trace has no input or output to judge (never sent to the judge)' }),
  scoreId: Type.Union([Type.String(), Type.Null()]),
  judgeModel: Type.Union([Type.String(), Type.Null()], { description: 'the model that answered' }),
  inputTokens: Type.Union([Type.Integer(), Type.Null()]),
  outputTokens: Type.Union([Type.Integer(), Type.Null()]),
  costUsd: Type.Union([Type.Number(), Type.Null()], { description: 'null when the model’s price is not known' }),
  latencyMs: Type.Union([Type.Integer(), Type.Null()]),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})

export const EvaluatorParamsSchema = Type.Object({ evaluatorId: IdSchema })

export const EvaluatorPreviewBodySchema = Type.Object(
  {
    prompt: Type.Optional(Type.String({ minLength: 1, maxLength: 50_000, description: 'a template over {{input}}, {{output}} and {{expected_output}}' })),
    promptRef: Type.Optional(
      Type.Object(
        { name: Type.String({ minLength: 1, maxLength: 200, description: 'a prompt registry of the project, by name' }), label: LabelNameSchema },
        { additionalProperties: false, description: 'the registry version this label points at; its text is the template' },
      ),
    ),
    traceId: Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'a trace of the project, 32 hex characters' }),
  },
  { additionalProperties: false, description: 'exactly one of prompt and promptRef' },
)

const Nullable = (description: string) => Type.Union([Type.String(), Type.Null()], { description })

export const EvaluatorPreviewSchema = Type.Object({
  input: Nullable('the trace’s input as the judge reads it (null: none)'),
  output: Nullable('the trace’s output as the judge reads it (null: none)'),
  prompt: Nullable('the template filled, as the judge would be sent it; null when the trace would be skipped'),
  skipped: Nullable('why a judge would skip the trace (never sending it); null when it would judge it'),
})
