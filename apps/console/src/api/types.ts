import type { Attributes } from '@tracewell/llm-messages'
import type { StoredSpan } from '@tracewell/span-schema'

// The shapes the console reads from the control plane's API (docs/api.md). Fields the API added
// later are optional, so the console keeps working against a server that does not send them yet.

// Attribute values are read by @tracewell/llm-messages, whose types these are.
export type { AnyValue, Attributes, SpanEvent } from '@tracewell/llm-messages'

export type TeamRoleName = 'viewer' | 'member' | 'admin' | 'owner'

/** A team of the signed-in person, as GET /api/me answers it. */
export interface MeTeam {
  id: string
  name: string
  role: TeamRoleName
  /** The projects the person may see, with their role on each. */
  projects: { id: string; name: string; role: TeamRoleName }[]
}

export interface Me {
  user: { id: string; email: string; name: string }
  teams: MeTeam[]
}

/**
 * Who the console is signed in as, in the team it works in: a person (their role there), or a
 * team key (an upgraded install's console, which acts as an admin of its team).
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
export interface OwnSession {
  id: string
  current: boolean
  createdAt: string
  lastSeenAt: string
  expiresAt: string
  ip: string | null
  userAgent: string | null
}

export interface Project {
  id: string
  name: string
  description: string
  teamId: string
  createdAt: string
  updatedAt: string
}

export interface TraceSummary {
  traceId: string
  name: string
  /** Comments on the trace (the trace list's only; absent on a session's traces). */
  commentCount?: number
  serviceName: string | null
  startTime: string
  endTime: string
  durationMs: number
  spanCount: number
  models: string[]
  errorCount?: number
  inputTokens?: number | null
  outputTokens?: number | null
  totalTokens?: number | null
  costUsd?: number | null
  sessionId?: string | null
  userId?: string | null
  scores?: Score[]
}

export type ScoreDataType = 'numeric' | 'boolean' | 'categorical'

/** A judgment of a trace, one of its spans, or a session (docs/api.md#scores). */
export interface Score {
  id: string
  traceId: string | null
  spanId: string | null
  sessionId: string | null
  name: string
  dataType: ScoreDataType
  value: number | boolean | string
  numericValue: number | null
  comment: string | null
  source: 'api' | 'annotation' | 'eval'
  author: string | null
  configId: string | null
  evaluatorId: string | null
  /** That evaluator's name, where the server gives it (null when it was deleted). */
  evaluatorName?: string | null
  createdAt: string
  updatedAt: string
}

export interface ScoreConfig {
  id: string
  projectId: string
  name: string
  dataType: ScoreDataType
  minValue: number | null
  maxValue: number | null
  categories: Array<{ label: string; value: number }> | null
  description: string
  createdAt: string
}

export interface TracePage {
  traces: TraceSummary[]
  nextCursor: string | null
}

export interface SpanLink {
  traceId?: string
  spanId?: string
  traceState?: string
  attributes?: Attributes
}

/** A stored span, as GET /api/traces/:traceId returns it: the one definition the control plane's schema is made from. */
export type Span = StoredSpan

export interface Trace {
  traceId: string
  spans: Span[]
  scores?: Score[]
}

export interface SessionSummary {
  sessionId: string
  userId: string | null
  firstSeen: string
  lastSeen: string
  traceCount: number
  totalTokens: number | null
  costUsd: number | null
}

export interface SessionPage {
  sessions: SessionSummary[]
  nextCursor: string | null
}

export interface SessionDetail {
  sessionId: string
  userId: string | null
  traces: TraceSummary[]
}

export interface UsageFigures {
  traces: number
  spans: number
  errors: number
  inputTokens: number
  outputTokens: number
  costUsd: number | null
  latencyP50Ms: number | null
  latencyP95Ms: number | null
}

export interface UsagePoint extends UsageFigures {
  bucket: string
  group: string | null
}

export interface ScoreAverage {
  name: string
  average: number
  count: number
}

export interface Usage {
  totals: UsageFigures
  series: UsagePoint[]
  scores?: { totals: ScoreAverage[]; series: Array<ScoreAverage & { bucket: string }> }
}

export interface Prompt {
  id: string
  value: string
  variables: string[]
  model: string
  modelSettings: Record<string, unknown>
  version: number
  live: boolean
  tags: string[]
  spanId: string | null
  note: string
  promptsetId: string
  createdAt: string
  updatedAt: string
  /** Labels (e.g. "production"), where the server has them. */
  labels?: string[]
}

export interface Promptset {
  id: string
  name: string
  description: string
  projectId: string
  createdAt: string
  updatedAt: string
}

export interface PromptsetWithPrompts extends Promptset {
  prompts: Prompt[]
}

export type ApiKeyScope = 'ingest' | 'read' | 'write'

export interface ApiKey {
  id: string
  kind: 'project' | 'team'
  prefix: string
  /** A project key's scopes; null: a team key, or a key made before scopes (every right). */
  scopes?: ApiKeyScope[] | null
  /** The person who made it; null when a key or the bootstrap did. */
  createdBy?: { id: string; name: string; email: string } | null
  createdAt: string
  expiresAt?: string | null
  lastUsedAt: string | null
  revokedAt: string | null
}

/** GET /api/projects/:projectId/ingest-limit: null values mean no limit. */
export interface IngestLimit {
  projectId: string
  source: 'project' | 'default'
  spansPerSecond: number | null
  burst: number | null
  default: { spansPerSecond: number | null; burst: number | null }
}

/** A run of the cleanup, any project's: what GET …/retention says of the latest. */
export interface CleanupRun {
  startedAt: string
  finishedAt: string
  trigger: 'schedule' | 'request'
  outcome: 'complete' | 'incomplete' | 'failed'
  deletedSpans: number
  droppedPartitions: number
}

export interface RetentionPolicy {
  projectId: string
  enabled: boolean
  retentionDays: number
  lastRunAt: string | null
  lastDeletedSpans: number | null
  /** How the cleanup runs: `endpoint` null until a janitor (or npm start) has started on the database. */
  cleanup: {
    endpoint: 'open' | 'cron-api-key' | null
    schedule: string | null
    nextRunAt: string | null
    lastRun: CleanupRun | null
  }
}

/** GET /api/summaries/status. */
export interface SummariesStatus {
  pendingTraces: number
  lagSeconds: number
}

export interface PromptLabel {
  name: string
  version: number
  updatedAt: string
}

export interface LabelMove {
  id: string
  label: string
  /** null: the label did not exist before. */
  fromVersion: number | null
  /** null: the label was removed. */
  toVersion: number | null
  movedAt: string
  movedByKeyId: string | null
  movedByKeyPrefix: string | null
  /** The signed-in person who moved it; absent or null when a key did. */
  movedByUser?: { id: string; name: string } | null
}

export interface LabelHistory {
  moves: LabelMove[]
  nextCursor: string | null
}

/** USD per million tokens; a null cache or reasoning price is the input (output) price. */
export interface TokenPrices {
  input: number
  output: number
  cacheRead: number | null
  cacheWrite: number | null
  reasoning: number | null
}

export interface ModelPrice {
  id: string
  projectId: string
  model: string
  match: 'exact' | 'glob'
  usdPerMillionTokens: TokenPrices
  effectiveFrom: string | null
  createdAt: string
}

export interface ModelPriceInput {
  model: string
  match: 'exact' | 'glob'
  usdPerMillionTokens: TokenPrices
  effectiveFrom: string | null
}

export interface Dataset {
  id: string
  projectId: string
  name: string
  description: string
  metadata: Record<string, unknown>
  version: number
  itemCount: number
  createdAt: string
  updatedAt: string
}

export interface DatasetItem {
  id: string
  datasetId: string
  input: unknown
  expectedOutput: unknown
  metadata: Record<string, unknown> | null
  sourceTraceId: string | null
  sourceSpanId: string | null
  validFrom: number
  validTo: number | null
  createdAt: string
}

export interface DatasetWithItems extends Dataset {
  itemsVersion: number
  itemsTotal: number
  items: DatasetItem[]
}

export interface ExperimentAggregates {
  results: { total: number; pending: number; completed: number; failed: number }
  latencyMs: { avg: number | null; p50: number | null; p95: number | null }
  inputTokens: number
  outputTokens: number
  costUsd: number | null
  scores: Array<{ name: string; avg: number | null; count: number }>
}

export interface Experiment {
  id: string
  datasetId: string
  datasetVersion: number
  name: string
  kind: 'prompt' | 'sdk'
  promptsetId: string | null
  promptVersion: number | null
  connectionId: string | null
  model: string | null
  modelSettings: Record<string, unknown>
  evaluatorIds: string[]
  status: 'queued' | 'running' | 'completed' | 'external'
  itemCount: number
  traceFilter: string
  aggregates: ExperimentAggregates
  createdAt: string
  finishedAt: string | null
}

export interface ExperimentResult {
  id: string
  datasetItemId: string
  input: unknown
  expectedOutput: unknown
  status: 'pending' | 'completed' | 'failed'
  error: string | null
  output: unknown
  traceId: string | null
  model: string | null
  inputTokens: number | null
  outputTokens: number | null
  costUsd: number | null
  latencyMs: number | null
  scores: Array<{ name: string; value: number | null; stringValue: string | null; comment: string | null; source: string }>
}

export interface ExperimentWithResults extends Experiment {
  results: ExperimentResult[]
}

export interface LlmConnection {
  id: string
  name: string
  baseUrl: string
  apiKeyHint: string
  createdAt: string
}

/** POST /api/llm-connections/:id/test: the connection's `GET <baseUrl>/models`, through the outbound guard. */
export interface ConnectionTest {
  ok: boolean
  /** The endpoint's HTTP status; null when it was refused or not reached. */
  status: number | null
  latencyMs: number
  message: string
}

export interface JudgmentCounts {
  pending: number
  completed: number
  failed: number
  /** Left out by sampling (or with nothing to judge). */
  skipped: number
}

/** docs/api.md#llm-as-judge-evaluators */
export interface Evaluator {
  id: string
  projectId: string
  name: string
  connectionId: string
  model: string
  prompt: string | null
  promptRef: { name: string; label: string } | null
  scoreName: string
  filter: Record<string, unknown>
  samplingRate: number
  enabled: boolean
  judgments: JudgmentCounts
  /** What the judge calls used, in total. */
  judge: { inputTokens: number; outputTokens: number; costUsd: number | null }
  createdAt: string
  updatedAt: string
}

export interface EvaluationRun {
  id: string
  evaluatorId: string
  from: string
  to: string
  status: 'queued' | 'running' | 'completed'
  traceCount: number | null
  judgments: JudgmentCounts
  createdAt: string
  finishedAt: string | null
}

export interface Judgment {
  id: string
  evaluatorId: string
  /** null: a new trace, not a run's. */
  runId: string | null
  traceId: string
  status: 'pending' | 'completed' | 'failed' | 'skipped'
  attempts: number
  error: string | null
  /** Why a skipped judgment was skipped (not sampled, or nothing in the trace to judge), where the server gives it. */
  skipReason?: string | null
  scoreId: string | null
  judgeModel: string | null
  inputTokens: number | null
  outputTokens: number | null
  costUsd: number | null
  latencyMs: number | null
  createdAt: string
  updatedAt: string
}

/** POST /api/evaluators/preview: the template filled from a trace, or why a judge would skip it. */
export interface EvaluatorPreview {
  input: string | null
  output: string | null
  prompt: string | null
  skipped: string | null
}

export interface PlaygroundMessage {
  role: 'system' | 'developer' | 'user' | 'assistant'
  content: string
}

export interface PlaygroundRun {
  traceId: string
  messages: PlaygroundMessage[]
  output: string
  toolCalls: Array<{ name: string; arguments: string }>
  error: string | null
  model: string
  inputTokens: number | null
  outputTokens: number | null
  costUsd: number | null
  latencyMs: number
  firstTokenMs: number | null
}

/** One change of the audit log (GET /api/teams/:teamId/audit-log). */
export interface AuditEntry {
  id: string
  createdAt: string
  teamId: string
  projectId: string | null
  actor: { kind: 'user' | 'team-key' | 'project-key'; id: string; label: string; name: string | null }
  action: string
  permission: string
  resourceType: string
  resourceId: string | null
  method: string
  route: string
  params: Record<string, string>
  status: number
  ip: string | null
  userAgent: string | null
  /** Settings routes: what differed, before and after; null elsewhere. */
  before: unknown
  after: unknown
}

export interface AuditLogFilters {
  actor?: string | undefined
  action?: string | undefined
  resourceType?: string | undefined
  from?: string | undefined
}
