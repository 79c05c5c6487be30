import type { Static } from '@sinclair/typebox'
import type {
  ApiKey,
  AuditEntry,
  CleanupRun,
  DatasetItemSchema,
  DatasetSchema,
  DatasetWithItemsSchema,
  EvaluatorPreviewSchema,
  EvaluatorSchema,
  ExperimentAggregatesSchema,
  ExperimentResultSchema,
  ExperimentSchema,
  ExperimentWithResultsSchema,
  IngestLimit,
  JudgmentSchema,
  LabelHistory,
  LabelMove,
  LlmConnectionSchema,
  LlmConnectionTest,
  MeSchema,
  ModelPrice,
  ModelPriceBody,
  OwnSessionSchema,
  PlaygroundRun,
  Project,
  PromptLabel,
  Promptset,
  PromptWithLabels,
  PromptsetWithLabels,
  RetentionPolicy,
  RunSchema,
  Score,
  ScoreConfigSchema,
  SessionListSchema,
  SessionRowSchema,
  SessionSchema,
  SummariesStatusSchema,
  TraceListSchema,
  TraceRowSchema,
  TraceSchema,
  UsageSchema,
} from '@tracewell/api-schemas'
import type { StoredSpan } from '@tracewell/span-schema'

// The shapes the console reads from the control plane's API: the route schemas' own types
// (@tracewell/api-schemas), imported as types only so no schema code enters the bundle.

// Attribute values are read by @tracewell/llm-messages, whose types these are.
export type { AnyValue, Attributes, SpanEvent } from '@tracewell/llm-messages'

export type { ApiKey, AuditEntry, CleanupRun, IngestLimit, LabelHistory, LabelMove, ModelPrice, PlaygroundRun, Project, PromptLabel, Promptset, PromptsetWithLabels, RetentionPolicy, Score }

/** GET /api/me. */
export type Me = Static<typeof MeSchema>
/** A team of the signed-in person, with the projects they may see and their role on each. */
export type MeTeam = Me['teams'][number]
export type TeamRoleName = MeTeam['role']

/**
 * Who the console is signed in as, in the team it works in: a person (their role there), or a
 * team key (an upgraded install's console, which acts as an admin of its team). Made by the
 * console from GET /api/session or GET /api/me, not an answer of its own.
 */
export interface Session {
  kind: 'person' | 'team-key'
  teamId: string
  teamName: string
  role: TeamRoleName
  /** The person; absent for a team key. */
  user?: Me['user']
  /** Every team of the person (the team switcher's choices); only the one team for a team key. */
  teams: MeTeam[]
}

/** One of the signed-in person's sessions (GET /api/me/sessions). */
export type OwnSession = Static<typeof OwnSessionSchema>

/** A row of the trace list, or of a session's traces; only the trace list's rows count comments. */
export type TraceSummary = Static<typeof TraceRowSchema> & { commentCount?: number }
export type TracePage = Static<typeof TraceListSchema>

export type ScoreDataType = Score['dataType']
export type ScoreConfig = Static<typeof ScoreConfigSchema>

/** A stored span, as GET /api/traces/:traceId returns it: the one definition the control plane's schema is made from. */
export type Span = StoredSpan
export type Trace = Static<typeof TraceSchema>

export type SessionSummary = Static<typeof SessionRowSchema>
export type SessionPage = Static<typeof SessionListSchema>
export type SessionDetail = Static<typeof SessionSchema>

export type Usage = Static<typeof UsageSchema>
export type UsageFigures = Usage['totals']
export type UsagePoint = Usage['series'][number]
export type ScoreAverage = Usage['scores']['totals'][number]

/** A prompt version as the management API shows it: with the labels pointing at it. */
export type Prompt = PromptWithLabels

export type ApiKeyScope = NonNullable<ApiKey['scopes']>[number]

/** GET /api/summaries/status. */
export type SummariesStatus = Static<typeof SummariesStatusSchema>

/** USD per million tokens; a null cache or reasoning price is the input (output) price. */
export type TokenPrices = ModelPrice['usdPerMillionTokens']
export type ModelPriceInput = ModelPriceBody

export type Dataset = Static<typeof DatasetSchema>
export type DatasetItem = Static<typeof DatasetItemSchema>
export type DatasetWithItems = Static<typeof DatasetWithItemsSchema>

export type ExperimentAggregates = Static<typeof ExperimentAggregatesSchema>
export type Experiment = Static<typeof ExperimentSchema>
export type ExperimentResult = Static<typeof ExperimentResultSchema>
export type ExperimentWithResults = Static<typeof ExperimentWithResultsSchema>

export type LlmConnection = Static<typeof LlmConnectionSchema>
/** POST /api/llm-connections/:id/test: the connection's `GET <baseUrl>/models`, through the outbound guard. */
export type ConnectionTest = LlmConnectionTest

/** docs/api.md#llm-as-judge-evaluators */
export type Evaluator = Static<typeof EvaluatorSchema>
export type JudgmentCounts = Evaluator['judgments']
export type EvaluatorRun = Static<typeof RunSchema>
export type Judgment = Static<typeof JudgmentSchema>
/** POST /api/evaluators/preview: the template filled from a trace, or why a judge would skip it. */
export type EvaluatorPreview = Static<typeof EvaluatorPreviewSchema>

export type PlaygroundMessage = PlaygroundRun['messages'][number]
