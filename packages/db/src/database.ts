import type { ColumnType, Generated, GeneratedAlways, Insertable, Selectable, Updateable } from 'kysely'
import { spanColumnList, type SpanColumnName, type SpanColumns, type StoredSpanFields } from './repositories/span-rows.ts'

// The declared shape of the migrated schema. test/database-type.test.ts compares it (through
// `declaredColumns` below) with what the migrations actually create, so the two cannot drift.

/** A timestamptz: read as a Date, written as a Date or ISO string, defaulted by the database. */
type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>
type Timestamp = ColumnType<Date, Date | string, Date | string>
/** int8 is read as a decimal string (it may exceed 2^53), written as a number, bigint or string. */
type Int8 = ColumnType<string, number | bigint | string, number | bigint | string>
type Json<T> = ColumnType<T, string, string>
/** Any JSON value but null (a column that holds JSON null as SQL null). */
export type JsonValue = string | number | boolean | unknown[] | { [key: string]: unknown }
/** numeric is read as a decimal string (exact), written as a number or decimal string. */
type Numeric = ColumnType<string, number | string, number | string>

export interface TeamsTable {
  id: Generated<string>
  name: string
  created_at: CreatedAt
}

export interface ProjectsTable {
  id: Generated<string>
  team_id: string
  name: string
  description: Generated<string>
  created_at: CreatedAt
  updated_at: CreatedAt
}

export type ApiKeyKind = 'project' | 'team'

export interface ApiKeysTable {
  id: Generated<string>
  kind: ApiKeyKind
  team_id: string
  project_id: string | null
  key_hash: string
  prefix: string
  created_at: CreatedAt
  last_used_at: Timestamp | null
  revoked_at: Timestamp | null
  /** null: a key made before scopes, with every right it had (see @tracewell/policy). */
  scopes: string[] | null
  created_by_user_id: string | null
  expires_at: Timestamp | null
}

export interface UsersTable {
  id: Generated<string>
  email: string
  name: string
  /** Argon2id, PHC string; null for a person who signs in only through single sign-on. */
  password_hash: string | null
  email_verified: Generated<boolean>
  created_at: CreatedAt
  updated_at: CreatedAt
  password_changed_at: Timestamp | null
}

export interface TeamMembersTable {
  team_id: string
  user_id: string
  role: 'owner' | 'admin' | 'member' | 'viewer'
  created_at: CreatedAt
}

export interface ProjectMembersTable {
  project_id: string
  user_id: string
  role: 'owner' | 'admin' | 'member' | 'viewer' | 'none'
  created_at: CreatedAt
}

export interface UserSessionsTable {
  /** SHA-256 of the cookie's token, hex. */
  token_hash: string
  /** What a person sees and ends in their list of sessions (never the token). */
  id: Generated<string>
  user_id: string
  created_at: CreatedAt
  last_seen_at: CreatedAt
  /** The absolute limit; the idle limit is judged from last_seen_at. */
  expires_at: Timestamp
  ended_at: Timestamp | null
  ip: string | null
  user_agent: string | null
}

export type TeamRoleColumn = 'owner' | 'admin' | 'member' | 'viewer'

/** A team's own identity providers and sign-in rules (docs/accounts.md#single-sign-on). */
export interface TeamSsoSettingsTable {
  team_id: string
  oidc_issuer: string | null
  oidc_client_id: string | null
  /** sealSecret(secret, LLM_CONNECTION_ENCRYPTION_KEY, ssoClientSecretContext(teamId)). */
  oidc_client_secret_sealed: string | null
  oidc_display_name: string | null
  saml_entry_point: string | null
  saml_idp_issuer: string | null
  /** The IdP's signing certificate, PEM or its base64 body. */
  saml_idp_certificate: string | null
  saml_display_name: string | null
  allowed_domains: ColumnType<string[], string[] | undefined, string[]>
  default_role: ColumnType<TeamRoleColumn, TeamRoleColumn | undefined, TeamRoleColumn>
  role_claim: string | null
  /** A claim's value → the team role it grants. */
  role_map: ColumnType<Record<string, TeamRoleColumn>, string | undefined, string>
  password_sign_in: Generated<boolean>
  updated_at: CreatedAt
}

/** Which account a provider's subject signs in as. `provider`: `oidc`, `oidc:<teamId>:<issuer>` or `saml:<teamId>:<IdP entity id>`. */
export interface SsoIdentitiesTable {
  provider: string
  subject: string
  user_id: string
  created_at: CreatedAt
  last_sign_in_at: CreatedAt
}

/** A sign-in started at a provider, consumed by its callback. */
export interface SsoAttemptsTable {
  /** OIDC: the state; SAML: the AuthnRequest's ID. */
  id: string
  protocol: 'oidc' | 'saml'
  team_id: string | null
  browser_hash: string | null
  code_verifier: string | null
  nonce: string | null
  return_to: Generated<string>
  created_at: CreatedAt
  expires_at: Timestamp
}

export interface InvitationsTable {
  id: Generated<string>
  team_id: string
  email: string
  role: 'owner' | 'admin' | 'member' | 'viewer'
  /** Per-project roles the person gets on accepting: [{ projectId, role }]. */
  project_roles: Json<{ projectId: string; role: 'owner' | 'admin' | 'member' | 'viewer' | 'none' }[]>
  /** SHA-256 of the link's token, hex. */
  token_hash: string
  invited_by_user_id: string | null
  /** Whether the link went out by mail (an account made from a mailed link has a verified email). */
  mailed: Generated<boolean>
  created_at: CreatedAt
  expires_at: Timestamp
  accepted_at: Timestamp | null
  accepted_by_user_id: string | null
  revoked_at: Timestamp | null
}

export interface PasswordResetsTable {
  token_hash: string
  user_id: string
  created_at: CreatedAt
  expires_at: Timestamp
  used_at: Timestamp | null
}

export interface SetupLinksTable {
  token_hash: string
  created_at: CreatedAt
  used_at: Timestamp | null
}

export interface PromptsetsTable {
  id: Generated<string>
  project_id: string
  name: string
  description: Generated<string>
  created_at: CreatedAt
  updated_at: CreatedAt
}

export interface PromptsTable {
  id: Generated<string>
  promptset_id: string
  value: string
  variables: Json<string[]>
  model: string
  model_settings: Json<Record<string, unknown>>
  version: number
  /**
   * The previous release's "live" flag, kept in step with the `production` label by triggers
   * while that release may still run (see the prompt-labels migration). Read and written by
   * nothing here: the API's `live` is derived from the label, and a later migration drops it.
   */
  live: Generated<boolean>
  tags: Json<string[]>
  span_id: string | null
  note: Generated<string>
  created_at: CreatedAt
  updated_at: CreatedAt
}

/** A named pointer at one version of a promptset; `production` is the version GET /api/promptset serves. */
export interface PromptLabelsTable {
  promptset_id: string
  name: string
  version: number
  updated_at: CreatedAt
}

/** Every move of a label, oldest first by id; a null version is "absent" (created, removed). */
export interface PromptLabelMovesTable {
  /** An identity column (bigint, read as a decimal string); never written. */
  id: GeneratedAlways<string>
  promptset_id: string
  label: string
  from_version: number | null
  to_version: number | null
  moved_by_key_id: string | null
  moved_by_key_prefix: string | null
  /** The signed-in person who moved it (null when a key did, or their account is gone). */
  moved_by_user_id: string | null
  moved_at: CreatedAt
}

export interface ProjectRetentionPoliciesTable {
  project_id: string
  enabled: boolean
  retention_days: number
  created_at: CreatedAt
  updated_at: CreatedAt
  last_run_at: Timestamp | null
  last_deleted_spans: Int8 | null
}

export type RetentionRunTrigger = 'schedule' | 'request'
export type RetentionRunOutcome = 'complete' | 'incomplete' | 'failed'

/** A cleanup run that took the cleanup lock (retention-runs.repository.ts). */
export interface RetentionRunsTable {
  id: GeneratedAlways<string>
  started_at: Timestamp
  finished_at: Timestamp
  trigger: RetentionRunTrigger
  outcome: RetentionRunOutcome
  deleted_spans: Int8
  dropped_partitions: number
}

/** One row: how the process serving the cleanup is set up (retention-runs.repository.ts). */
export interface RetentionCleanupStatusTable {
  id: Generated<boolean>
  endpoint_open: boolean
  schedule: string | null
  next_run_at: Timestamp | null
  updated_at: CreatedAt
}

/** One row per trace, kept by the writer (trace-summaries.ts). */
export interface TraceSummariesTable {
  project_id: string
  trace_id: string
  name: string
  has_root: boolean
  service_name: string | null
  start_time: Date
  end_time: Date
  duration_us: Int8
  span_count: number
  error_count: number
  models: Generated<string[]>
  /** The models that answered (llm_response_model), where they differ from those asked for. */
  response_models: Generated<string[]>
  vendors: Generated<string[]>
  services: Generated<string[]>
  /** Sums of the counts the trace's spans reported; null when none reported one (unknown, not 0). */
  input_tokens: Int8 | null
  output_tokens: Int8 | null
  total_tokens: Int8 | null
  cost_usd: string | null
  /** Whether a span of the trace has estimated token counts (spans.tokens_estimated). */
  tokens_estimated: Generated<boolean>
  session_id: string | null
  user_id: string | null
  /** The word filter of full-text search (repositories/text-filter.ts), as varbit text. */
  text_filter: string | null
  /** The UTC day the summariser last made or moved the row: the partition key (day-partitions.repository.ts). */
  fold_day: Generated<Date>
  /**
   * Always true: the trace's words are in its block's word filter (trace_text_blocks). Without a
   * default, so that a summariser of a version before the blocks, which would leave its traces
   * out of them, cannot write a summary (migration 2026-11-27T0600-text-blocks).
   */
  words_in_blocks: boolean
  /** The prompts (promptset:version) and tags its spans named (trace-labels.ts of @tracewell/write-path). */
  prompts: Generated<string[]>
  tags: Generated<string[]>
}

/** The words of a project's traces that started in one block of ten minutes (text-blocks.repository.ts). */
export interface TraceTextBlocksTable {
  project_id: string
  /** The block's start: its traces started in [block, block + 10 minutes). The partition key. */
  block: Date
  /** How many words its filter was given: what sizes the project's next block. */
  words: number
  /** The Bloom filter of its words (@tracewell/text-filter's BlockFilter), as varbit text. */
  filter: string
}

/** Hourly usage by dimension, kept by the writer (usage-rollups.ts). */
export interface UsageRollupsTable {
  project_id: string
  dimension: string
  hour: Date
  value: string
  traces: number
  spans: number
  errors: number
  /** Null when no span of the row reported a count. */
  input_tokens: Int8 | null
  output_tokens: Int8 | null
  cost_usd: string | null
  latency: number[]
  /** The row's traces with an error span. */
  error_traces: Generated<number>
  /** The row's traces by duration: counts subscripted by latency bucket, lowest to highest bucket held (migration 2026-12-06T0700). */
  durations: Generated<number[]>
  /** A user's row of the day: their traces by UTC hour of the day, 24 counts from 00:00 (migration 2026-12-06T1621); null on other rows. */
  hours: number[] | null
}

/**
 * A session's figures over its 'session' rollup rows of the settled hours (before
 * session_figures_settled's boundary, migration 2026-12-06T1600), kept by a trigger on those rows
 * (migration 2026-12-06T1500): what the dashboards rank sessions by. Unknown tokens and cost count as 0.
 */
export interface SessionFiguresTable {
  project_id: string
  session_id: string
  /** The first and last hour of the session's settled rows, or wider (a row lowered to nothing leaves them). */
  first_hour: Date
  last_hour: Date
  /** The UTC day of first_hour (generated). */
  first_day: Generated<Date>
  traces: number
  error_traces: number
  spans: number
  errors: number
  input_tokens: Int8
  output_tokens: Int8
  cost_usd: string
  durations: number[]
  /** At or before the session's first row from the boundary on, where it has one; null where it has none (migration 2026-12-06T1600). */
  open_from: Generated<Date | null>
}

/** The boundary before which session_figures holds the sessions' rows (migration 2026-12-06T1600): one row. */
export interface SessionFiguresSettledTable {
  one: Generated<boolean>
  /** The start of a UTC day: the hours from it are read from their hourly rows. */
  settled_until: Date
}

/**
 * A user's figures over their 'user.day' rollup rows of a UTC week (Monday to Monday), kept by a
 * trigger on those rows (migration 2026-12-06T1610): what the dashboards rank users by over a
 * window's whole weeks. Unknown tokens and cost count as 0.
 */
export interface UserWeekFiguresTable {
  project_id: string
  /** The week's Monday, 00:00 UTC. */
  week: Date
  user_id: string
  traces: number
  error_traces: number
  spans: number
  errors: number
  input_tokens: Int8
  output_tokens: Int8
  cost_usd: string
  durations: number[]
}

/**
 * How many distinct users and sessions had each set of hours of a settled UTC day (24-bit masks) among the traces of
 * one model, vendor, service, prompt, tag or user (value null: the traces without one), built from the
 * summaries (migration 2026-12-07T0100): what dashboards count users and sessions by a group from.
 */
export interface GroupMemberDaysTable {
  project_id: string
  day: Date
  dimension: string
  value: string | null
  /** Bit h: a trace of the value started in hour h of the day. */
  hours: number
  /** The distinct users' masks of hours (bit h: a trace of theirs started in hour h), ascending, and how many users had each. */
  user_masks: number[]
  user_counts: number[]
  /** The same of the distinct sessions. */
  session_masks: number[]
  session_counts: number[]
}

/** Whether a project's day is read from group_member_days (built, and unchanged since): migration 2026-12-07T0100. */
export interface GroupMemberDayMarksTable {
  project_id: string
  day: Date
  built: boolean
}

/** The settled days' end the last build reached (migration 2026-12-07T0100): one row. */
export interface GroupMemberDaysSettledTable {
  one: Generated<boolean>
  settled_until: Date
}

/** Each score name's count and sum of values an hour, kept by triggers on scores (migration 2026-12-06T0700). */
export interface ScoreRollupsTable {
  project_id: string
  name: string
  hour: Date
  scores: number
  value_sum: number
}

/**
 * A score with a value, and its trace's dimensions as its summary holds them once `summarised`
 * (null when it has no trace), kept by triggers on scores and by the fold (migration 2026-12-06T2200).
 */
export interface ScoreDimensionsTable extends TraceDimensionCopy {
  project_id: string
  score_id: string
  name: string
  created_at: Date
  value: number
  trace_id: string | null
}

/** A row's copy of its trace's dimensions as its summary holds them, once known (`summarised`), and whether the fold looked for them in every day (`sought`). */
export interface TraceDimensionCopy {
  summarised: boolean
  sought: Generated<boolean>
  service_name: string | null
  models: string[] | null
  response_models: string[] | null
  vendors: string[] | null
  services: string[] | null
  prompts: string[] | null
  tags: string[] | null
  user_id: string | null
  session_id: string | null
}

/** A finished judgment with its trace's dimensions (migration 2026-12-07T0110), as ScoreDimensionsTable for a score. */
export interface JudgmentDimensionsTable extends TraceDimensionCopy {
  project_id: string
  job_id: string
  created_at: Date
  finished_at: Date
  failed: boolean
  trace_id: string
}

/** What a stored batch adds to the summaries, until the summariser folds it in (write-path). */
export interface SummaryDeltasTable {
  id: Generated<Int8>
  created_at: Generated<Date>
  trace_count: number
  /** JSON text, not checked by Postgres (migration 2026-12-06T0801). */
  traces: string
  usage: string
}

/** One row per session, kept by the writer (session-summaries.ts). */
export interface SessionSummariesTable {
  project_id: string
  session_id: string
  user_id: string | null
  first_seen: Date
  last_seen: Date
  trace_count: number
  /** Null when no trace of the session reported a count. */
  total_tokens: Int8 | null
  cost_usd: string | null
  /** The UTC day the summariser last made the row: the partition key (day-partitions.repository.ts). */
  fold_day: Generated<Date>
}

/** A column's type, from how it is stored and the span field it holds (span-rows.ts). */
type StoredAs<Kind, Field extends keyof StoredSpanFields> = Kind extends 'int16'
  ? number
  : Kind extends 'timestamp'
    ? Timestamp
    : Kind extends 'int64Decimal'
      ? Int8
      : Kind extends 'int64'
        ? Int8 | NullIn<Field>
        : Kind extends 'numeric'
          ? Numeric | NullIn<Field>
          : Kind extends 'bool'
            ? Generated<boolean> // a boolean column added later has a default for the rows before it
            : Kind extends 'jsonb' | 'sharedJsonb'
              ? Json<Exclude<StoredSpanFields[Field], undefined>>
              : Exclude<StoredSpanFields[Field], undefined>
type NullIn<Field extends keyof StoredSpanFields> = null extends StoredSpanFields[Field] ? null : never

/** The spans table, as its columns are described (spanColumns). */
export type SpansTable = { [Column in SpanColumnName]: StoredAs<SpanColumns[Column]['kind'], SpanColumns[Column]['field']> } & { received_at: CreatedAt }

/** Where a span's cost came from (see @tracewell/llm-usage). */
export type CostSource = 'attribute' | 'custom_price' | 'price_table'

export type ModelMatch = 'exact' | 'glob'

/** A project's own price for a model (USD per million tokens), matched by exact name or glob. */
export interface ProjectModelPricesTable {
  id: Generated<string>
  project_id: string
  model: string
  match: ModelMatch
  input_usd_per_mtok: Numeric
  output_usd_per_mtok: Numeric
  cache_read_usd_per_mtok: Numeric | null
  cache_write_usd_per_mtok: Numeric | null
  reasoning_usd_per_mtok: Numeric | null
  effective_from: Timestamp | null
  created_at: CreatedAt
}

export type ScoreDataType = 'numeric' | 'boolean' | 'categorical'
export type ScoreSource = 'api' | 'annotation' | 'eval'

/** A project's named score: its type, and its range or categories (scores of that name are checked against it). */
export interface ScoreConfigsTable {
  id: Generated<string>
  project_id: string
  name: string
  data_type: ScoreDataType
  min_value: number | null
  max_value: number | null
  /** [{ label, value }] of a categorical score; null for the others. */
  categories: Json<Array<{ label: string; value: number }>> | null
  description: Generated<string>
  created_at: CreatedAt
}

/** A score on a trace, one of its spans, or a session (scores.repository.ts). */
export interface ScoresTable {
  project_id: string
  id: string
  trace_id: string | null
  span_id: string | null
  session_id: string | null
  name: string
  data_type: ScoreDataType
  value: number | null
  string_value: string | null
  comment: string | null
  source: ScoreSource
  author: string | null
  config_id: string | null
  evaluator_id: string | null
  created_at: CreatedAt
  updated_at: CreatedAt
}

/** A project's OpenAI-compatible endpoint; the API key only sealed (llm-connections.repository.ts). */
export interface LlmConnectionsTable {
  id: Generated<string>
  project_id: string
  name: string
  provider: 'openai'
  base_url: string
  api_key_sealed: string
  api_key_hint: string
  created_at: CreatedAt
}

/** An LLM judge of a project's traces (evaluators.repository.ts). */
export interface EvaluatorsTable {
  id: Generated<string>
  project_id: string
  name: string
  connection_id: string
  model: string
  prompt: string | null
  prompt_name: string | null
  prompt_label: string | null
  score_name: string
  filter: ColumnType<Record<string, unknown>, string | undefined, string>
  sampling_rate: Generated<number>
  enabled: Generated<boolean>
  created_at: CreatedAt
  updated_at: CreatedAt
  /** The annotation queue that gets the traces this evaluator scores below review_below. */
  review_queue_id: string | null
  review_below: number | null
}

export type EvaluatorRunStatus = 'queued' | 'running' | 'completed'

/** An on-demand run of an evaluator over the traces of a time range. */
export interface EvaluatorRunsTable {
  id: Generated<string>
  project_id: string
  evaluator_id: string
  from_time: Timestamp
  to_time: Timestamp
  status: Generated<EvaluatorRunStatus>
  trace_count: number | null
  created_at: CreatedAt
  finished_at: Timestamp | null
}

export type JudgmentStatus = 'pending' | 'completed' | 'failed' | 'skipped'

/** One judgment of one trace by one evaluator (for new traces, or within a run). */
export interface JudgmentsTable {
  id: Generated<string>
  project_id: string
  evaluator_id: string
  run_id: string | null
  trace_id: string
  status: Generated<JudgmentStatus>
  attempts: Generated<number>
  error: string | null
  /** Why a skipped judgment was skipped (sampling, or nothing to judge). */
  skip_reason: string | null
  score_id: string | null
  judge_model: string | null
  input_tokens: number | null
  output_tokens: number | null
  cost_usd: Numeric | null
  latency_ms: number | null
  created_at: CreatedAt
  updated_at: CreatedAt
}

/** A project's named set of items; version rises by one with every change to its items (datasets.repository.ts). */
export interface DatasetsTable {
  id: Generated<string>
  project_id: string
  name: string
  description: Generated<string>
  metadata: ColumnType<Record<string, unknown>, string | undefined, string>
  version: Generated<number>
  created_at: CreatedAt
  updated_at: CreatedAt
}

/** One row of an item per span of versions it is valid in: [valid_from, valid_to). */
export interface DatasetItemsTable {
  dataset_id: string
  id: string
  valid_from: number
  valid_to: number | null
  position: number
  input: Json<JsonValue>
  expected_output: ColumnType<unknown, string | null, string | null>
  metadata: ColumnType<Record<string, unknown> | null, string | null, string | null>
  source_trace_id: string | null
  source_span_id: string | null
  created_at: CreatedAt
}

export type ExperimentKind = 'prompt' | 'sdk'
export type ExperimentStatus = 'queued' | 'running' | 'completed' | 'external'

/** A prompt version (or the caller's code, kind sdk) run over one version of a dataset (experiments.repository.ts). */
export interface ExperimentsTable {
  id: Generated<string>
  project_id: string
  dataset_id: string
  dataset_version: number
  name: string
  description: Generated<string>
  metadata: ColumnType<Record<string, unknown>, string | undefined, string>
  kind: ExperimentKind
  promptset_id: string | null
  prompt_version: number | null
  connection_id: string | null
  model: string | null
  model_settings: ColumnType<Record<string, unknown>, string | undefined, string>
  evaluator_ids: ColumnType<string[], string | undefined, string>
  status: Generated<ExperimentStatus>
  item_count: Generated<number>
  created_at: CreatedAt
  finished_at: Timestamp | null
}

export type ExperimentResultStatus = 'pending' | 'completed' | 'failed'

/** What one dataset item gave in one experiment, and the trace that records it. */
export interface ExperimentResultsTable {
  id: Generated<string>
  project_id: string
  experiment_id: string
  dataset_item_id: string
  status: Generated<ExperimentResultStatus>
  attempts: Generated<number>
  error: string | null
  output: ColumnType<unknown, string | null | undefined, string | null>
  trace_id: string | null
  span_id: string | null
  model: string | null
  input_tokens: number | null
  output_tokens: number | null
  cost_usd: Numeric | null
  latency_ms: number | null
  created_at: CreatedAt
  updated_at: CreatedAt
}

export type ErasureStatus = 'queued' | 'running' | 'rechecking' | 'completed'

/** A request to erase everything about a user, a session or some traces (erasures.repository.ts). */
export interface ErasureRequestsTable {
  id: Generated<string>
  project_id: string
  user_id: string | null
  session_id: string | null
  /** How many traces the request named (a request by trace ids), else 0. */
  trace_count: Generated<number>
  status: Generated<ErasureStatus>
  /** When the re-check (the second pass, once the queue has drained) may start. */
  recheck_at: Timestamp | null
  deleted_spans: ColumnType<string, number | bigint | string | undefined, number | bigint | string>
  deleted_traces: Generated<number>
  deleted_sessions: Generated<number>
  deleted_scores: Generated<number>
  deleted_judgments: Generated<number>
  deleted_dataset_items: Generated<number>
  requested_by: string | null
  created_at: CreatedAt
  updated_at: CreatedAt
  completed_at: Timestamp | null
}

/** A trace an erasure took (erased) or still has to take. */
export interface ErasureTracesTable {
  erasure_id: string
  trace_id: string
  erased: Generated<boolean>
}

export type MonitorState = 'ok' | 'alerting' | 'no_data'
export type MonitorEventKind = 'alerting' | 'resolved' | 'no_data' | 'renotify' | 'budget'

/** A monitor: a metric of a project against a threshold, evaluated every evaluate_every_seconds (2026-12-06T0210). */
export interface MonitorsTable {
  id: Generated<string>
  project_id: string
  name: string
  metric: string
  score_name: string | null
  filter: ColumnType<Record<string, unknown>, string | undefined, string>
  window_kind: Generated<'rolling' | 'calendar_month'>
  window_seconds: number | null
  operator: '>' | '>=' | '<' | '<='
  threshold: number
  evaluate_every_seconds: Generated<number>
  channel_ids: Generated<string[]>
  renotify_after_seconds: number | null
  muted_until: Date | null
  budget_percents: number[] | null
  budget_month: string | null
  budget_notified_percent: number | null
  state: Generated<MonitorState>
  state_value: number | null
  state_changed_at: Date | null
  last_value: number | null
  last_evaluated_at: Date | null
  next_evaluation_at: CreatedAt
  last_notified_at: Date | null
  created_at: CreatedAt
  updated_at: CreatedAt
}

/** Where a project's monitor notifications go (notification-channels.repository.ts). */
export interface NotificationChannelsTable {
  id: Generated<string>
  project_id: string
  name: string
  type: 'webhook' | 'slack' | 'email'
  url: string | null
  address: string | null
  /** The webhook's signing secret, sealed (@tracewell/auth sealSecret); null for Slack and email. */
  secret_sealed: string | null
  secret_hint: string | null
  created_at: CreatedAt
  updated_at: CreatedAt
}

/** A monitor's state change, renotification or budget step: its history and the notification outbox. */
export interface MonitorEventsTable {
  id: Generated<string>
  monitor_id: string
  project_id: string
  kind: MonitorEventKind
  state: MonitorState
  value: number | null
  threshold: number
  window_from: Timestamp
  window_to: Timestamp
  channel_ids: Generated<string[]>
  created_at: CreatedAt
  /** Set by the delivery worker once it has made the event's deliveries. */
  dispatched_at: Date | null
}

/** A project's dashboard: its widgets, each a metric drawn as a chart (dashboards.repository.ts). */
export interface DashboardsTable {
  id: Generated<string>
  project_id: string
  name: string
  /** The widgets with their grid layout, as the API gives them (ids assigned). */
  widgets: Json<unknown[]>
  is_default: Generated<boolean>
  created_at: CreatedAt
  updated_at: CreatedAt
}

/** One notification to one channel, retried until delivered or given up (notification-deliveries.repository.ts). */
export interface NotificationDeliveriesTable {
  id: Generated<string>
  channel_id: string
  /** The monitor event it tells of; null for a test message. */
  event_id: string | null
  kind: 'event' | 'test'
  payload: ColumnType<Record<string, unknown>, string, string>
  status: ColumnType<'pending' | 'delivered' | 'failed', 'pending' | 'delivered' | 'failed' | undefined, 'pending' | 'delivered' | 'failed'>
  attempts: Generated<number>
  next_attempt_at: CreatedAt
  last_status: number | null
  last_error: string | null
  created_at: CreatedAt
  delivered_at: Date | null
}

/** Each try of a delivery: the delivery log. */
export interface NotificationAttemptsTable {
  /** An identity column (bigint, read as a decimal string); never written. */
  id: GeneratedAlways<string>
  delivery_id: string
  attempted_at: CreatedAt
  ok: boolean
  http_status: number | null
  error: string | null
  duration_ms: number
}

export type CommentObjectType = 'trace' | 'span' | 'session' | 'prompt' | 'dataset_item'

export interface CommentsTable {
  id: Generated<string>
  project_id: string
  object_type: CommentObjectType
  object_id: string
  /** The first comment of the thread this one answers; null for a first comment. */
  thread_id: string | null
  author_user_id: string | null
  body: string
  mentions: Generated<string[]>
  resolved_at: Timestamp | null
  resolved_by_user_id: string | null
  created_at: CreatedAt
  updated_at: CreatedAt
}

export interface UserNotificationsTable {
  id: Generated<string>
  user_id: string
  project_id: string
  kind: 'mention'
  comment_id: string | null
  created_at: CreatedAt
  read_at: Timestamp | null
}

export interface AnnotationQueuesTable {
  id: Generated<string>
  project_id: string
  name: string
  description: Generated<string>
  score_config_ids: Generated<string[]>
  assignee_ids: Generated<string[]>
  created_by_user_id: string | null
  created_at: CreatedAt
  updated_at: CreatedAt
}

export interface AnnotationQueueItemsTable {
  id: Generated<string>
  queue_id: string
  object_type: 'trace' | 'span' | 'session'
  object_id: string
  position: Generated<Int8>
  status: Generated<'pending' | 'completed'>
  held_by_user_id: string | null
  held_until: Timestamp | null
  completed_by_user_id: string | null
  completed_at: Timestamp | null
  created_at: CreatedAt
}

export interface SavedViewsTable {
  id: Generated<string>
  project_id: string
  owner_user_id: string
  name: string
  shared: Generated<boolean>
  state: Json<Record<string, unknown>>
  created_at: CreatedAt
  updated_at: CreatedAt
}

export interface SavedViewDefaultsTable {
  user_id: string
  project_id: string
  view_id: string
}

export interface TraceSharesTable {
  token_hash: string
  id: Generated<string>
  project_id: string
  trace_id: string
  created_by_user_id: string | null
  created_by_key_id: string | null
  created_at: CreatedAt
  expires_at: Timestamp | null
  revoked_at: Timestamp | null
}

export interface Database {
  teams: TeamsTable
  projects: ProjectsTable
  api_keys: ApiKeysTable
  users: UsersTable
  team_members: TeamMembersTable
  project_members: ProjectMembersTable
  user_sessions: UserSessionsTable
  comments: CommentsTable
  user_notifications: UserNotificationsTable
  annotation_queues: AnnotationQueuesTable
  annotation_queue_items: AnnotationQueueItemsTable
  saved_views: SavedViewsTable
  saved_view_defaults: SavedViewDefaultsTable
  trace_shares: TraceSharesTable
  audit_log: AuditLogTable
  team_sso_settings: TeamSsoSettingsTable
  sso_identities: SsoIdentitiesTable
  sso_attempts: SsoAttemptsTable
  invitations: InvitationsTable
  password_resets: PasswordResetsTable
  setup_links: SetupLinksTable
  promptsets: PromptsetsTable
  prompts: PromptsTable
  prompt_labels: PromptLabelsTable
  prompt_label_moves: PromptLabelMovesTable
  project_retention_policies: ProjectRetentionPoliciesTable
  project_ingest_limits: ProjectIngestLimitsTable
  retention_runs: RetentionRunsTable
  retention_cleanup_status: RetentionCleanupStatusTable
  project_masking_rules: ProjectMaskingRulesTable
  spans: SpansTable
  project_model_prices: ProjectModelPricesTable
  trace_summaries: TraceSummariesTable
  usage_rollups: UsageRollupsTable
  trace_text_blocks: TraceTextBlocksTable
  session_summaries: SessionSummariesTable
  summary_deltas: SummaryDeltasTable
  console_session_revocations: ConsoleSessionRevocationsTable
  score_configs: ScoreConfigsTable
  scores: ScoresTable
  score_rollups: ScoreRollupsTable
  score_dimensions: ScoreDimensionsTable
  judgment_dimensions: JudgmentDimensionsTable
  session_figures: SessionFiguresTable
  user_week_figures: UserWeekFiguresTable
  session_figures_settled: SessionFiguresSettledTable
  group_member_days: GroupMemberDaysTable
  group_member_day_marks: GroupMemberDayMarksTable
  group_member_days_settled: GroupMemberDaysSettledTable
  llm_connections: LlmConnectionsTable
  evaluators: EvaluatorsTable
  evaluation_runs: EvaluatorRunsTable
  evaluation_jobs: JudgmentsTable
  datasets: DatasetsTable
  dataset_items: DatasetItemsTable
  experiments: ExperimentsTable
  experiment_results: ExperimentResultsTable
  erasure_requests: ErasureRequestsTable
  erasure_traces: ErasureTracesTable
  monitors: MonitorsTable
  monitor_events: MonitorEventsTable
  dashboards: DashboardsTable
  notification_channels: NotificationChannelsTable
  notification_deliveries: NotificationDeliveriesTable
  notification_attempts: NotificationAttemptsTable
}

export type Team = Selectable<TeamsTable>
export type Project = Selectable<ProjectsTable>
export type ApiKey = Selectable<ApiKeysTable>
export type NewApiKey = Insertable<ApiKeysTable>
export type Promptset = Selectable<PromptsetsTable>
export type Prompt = Selectable<PromptsTable>
export type NewPrompt = Insertable<PromptsTable>
export type PromptLabel = Selectable<PromptLabelsTable>
export type PromptLabelMove = Selectable<PromptLabelMovesTable>
export type RetentionPolicy = Selectable<ProjectRetentionPoliciesTable>
export type RetentionPolicyUpdate = Updateable<ProjectRetentionPoliciesTable>
export type Span = Selectable<SpansTable>
export type ProjectModelPrice = Selectable<ProjectModelPricesTable>

/** A project's own ingest rate limit (ingest-limits.repository.ts); both null: no limit at all. */
export interface ProjectIngestLimitsTable {
  project_id: string
  spans_per_second: number | null
  burst: number | null
  created_at: CreatedAt
  updated_at: CreatedAt
}

/** A project's own masking rules (masking-rules.repository.ts); an empty list masks nothing. */
export interface ProjectMaskingRulesTable {
  project_id: string
  rules: Json<unknown[]>
  created_at: CreatedAt
  updated_at: CreatedAt
}

/** A console session signed out before it expired: refused until then (console-sessions.repository.ts). */
export interface ConsoleSessionRevocationsTable {
  session_id: string
  expires_at: Timestamp
  revoked_at: CreatedAt
}

export type AuditActorKind = 'user' | 'team-key' | 'project-key'

/** One change made through the API (audit-log.repository.ts); append-only, see its migration. */
export interface AuditLogTable {
  /** int8, read as a decimal string. */
  id: GeneratedAlways<string>
  created_at: CreatedAt
  team_id: string
  project_id: string | null
  actor_kind: AuditActorKind
  /** The person's or the key's id. */
  actor_id: string
  /** The person's email or the key's prefix when the change was made. */
  actor_label: string
  /** The route's operationId (setRetentionPolicy, createModelPrice…). */
  action: string
  /** The route's permission (docs/permissions.md). */
  permission: string
  /** The permission's resource (settings, prompts, members…). */
  resource_type: string
  resource_id: string | null
  method: string
  /** The route's path template (/api/projects/:projectId/retention). */
  route: string
  params: Json<Record<string, string>>
  status: number
  ip: string | null
  user_agent: string | null
  before: Json<unknown> | null
  after: Json<unknown> | null
}

// ---- The runtime twin of the types above, checked against the live schema by a test. ----

type IsNullable<T> = null extends T ? true : false
type ColumnsOf<Table> = { [Column in keyof Table]-?: { nullable: IsNullable<Selectable<Table>[Column & keyof Selectable<Table>]> } }
type DeclaredColumns = { [Table in keyof Database]: ColumnsOf<Database[Table]> }

const notNull = { nullable: false } as const
const nullable = { nullable: true } as const

/** Every table's columns and their nullability; the compiler checks this matches `Database`. */
export const declaredColumns: DeclaredColumns = {
  teams: { id: notNull, name: notNull, created_at: notNull },
  projects: { id: notNull, team_id: notNull, name: notNull, description: notNull, created_at: notNull, updated_at: notNull },
  api_keys: {
    id: notNull, kind: notNull, team_id: notNull, project_id: nullable, key_hash: notNull, prefix: notNull,
    created_at: notNull, last_used_at: nullable, revoked_at: nullable, scopes: nullable, created_by_user_id: nullable, expires_at: nullable,
  },
  users: { id: notNull, email: notNull, name: notNull, password_hash: nullable, email_verified: notNull, created_at: notNull, updated_at: notNull, password_changed_at: nullable },
  team_members: { team_id: notNull, user_id: notNull, role: notNull, created_at: notNull },
  project_members: { project_id: notNull, user_id: notNull, role: notNull, created_at: notNull },
  comments: {
    id: notNull, project_id: notNull, object_type: notNull, object_id: notNull, thread_id: nullable, author_user_id: nullable, body: notNull,
    mentions: notNull, resolved_at: nullable, resolved_by_user_id: nullable, created_at: notNull, updated_at: notNull,
  },
  user_notifications: { id: notNull, user_id: notNull, project_id: notNull, kind: notNull, comment_id: nullable, created_at: notNull, read_at: nullable },
  annotation_queues: {
    id: notNull, project_id: notNull, name: notNull, description: notNull, score_config_ids: notNull, assignee_ids: notNull, created_by_user_id: nullable,
    created_at: notNull, updated_at: notNull,
  },
  annotation_queue_items: {
    id: notNull, queue_id: notNull, object_type: notNull, object_id: notNull, position: notNull, status: notNull, held_by_user_id: nullable,
    held_until: nullable, completed_by_user_id: nullable, completed_at: nullable, created_at: notNull,
  },
  saved_views: { id: notNull, project_id: notNull, owner_user_id: notNull, name: notNull, shared: notNull, state: notNull, created_at: notNull, updated_at: notNull },
  saved_view_defaults: { user_id: notNull, project_id: notNull, view_id: notNull },
  trace_shares: {
    token_hash: notNull, id: notNull, project_id: notNull, trace_id: notNull, created_by_user_id: nullable, created_by_key_id: nullable, created_at: notNull,
    expires_at: nullable, revoked_at: nullable,
  },
  user_sessions: {
    token_hash: notNull, id: notNull, user_id: notNull, created_at: notNull, last_seen_at: notNull, expires_at: notNull, ended_at: nullable, ip: nullable, user_agent: nullable,
  },
  audit_log: {
    id: notNull, created_at: notNull, team_id: notNull, project_id: nullable, actor_kind: notNull, actor_id: notNull, actor_label: notNull,
    action: notNull, permission: notNull, resource_type: notNull, resource_id: nullable, method: notNull, route: notNull, params: notNull,
    status: notNull, ip: nullable, user_agent: nullable, before: nullable, after: nullable,
  },
  team_sso_settings: {
    team_id: notNull, oidc_issuer: nullable, oidc_client_id: nullable, oidc_client_secret_sealed: nullable, oidc_display_name: nullable,
    saml_entry_point: nullable, saml_idp_issuer: nullable, saml_idp_certificate: nullable, saml_display_name: nullable,
    allowed_domains: notNull, default_role: notNull, role_claim: nullable, role_map: notNull, password_sign_in: notNull, updated_at: notNull,
  },
  sso_identities: { provider: notNull, subject: notNull, user_id: notNull, created_at: notNull, last_sign_in_at: notNull },
  sso_attempts: {
    id: notNull, protocol: notNull, team_id: nullable, browser_hash: nullable, code_verifier: nullable, nonce: nullable, return_to: notNull, created_at: notNull, expires_at: notNull,
  },
  invitations: {
    id: notNull, team_id: notNull, email: notNull, role: notNull, project_roles: notNull, token_hash: notNull, invited_by_user_id: nullable, mailed: notNull,
    created_at: notNull, expires_at: notNull, accepted_at: nullable, accepted_by_user_id: nullable, revoked_at: nullable,
  },
  password_resets: { token_hash: notNull, user_id: notNull, created_at: notNull, expires_at: notNull, used_at: nullable },
  setup_links: { token_hash: notNull, created_at: notNull, used_at: nullable },
  promptsets: { id: notNull, project_id: notNull, name: notNull, description: notNull, created_at: notNull, updated_at: notNull },
  prompts: {
    id: notNull, promptset_id: notNull, value: notNull, variables: notNull, model: notNull, model_settings: notNull,
    version: notNull, live: notNull, tags: notNull, span_id: nullable, note: notNull, created_at: notNull, updated_at: notNull,
  },
  prompt_labels: { promptset_id: notNull, name: notNull, version: notNull, updated_at: notNull },
  prompt_label_moves: {
    id: notNull, promptset_id: notNull, label: notNull, from_version: nullable, to_version: nullable,
    moved_by_key_id: nullable, moved_by_key_prefix: nullable, moved_by_user_id: nullable, moved_at: notNull,
  },
  project_retention_policies: {
    project_id: notNull, enabled: notNull, retention_days: notNull, created_at: notNull, updated_at: notNull,
    last_run_at: nullable, last_deleted_spans: nullable,
  },
  project_ingest_limits: { project_id: notNull, spans_per_second: nullable, burst: nullable, created_at: notNull, updated_at: notNull },
  retention_runs: { id: notNull, started_at: notNull, finished_at: notNull, trigger: notNull, outcome: notNull, deleted_spans: notNull, dropped_partitions: notNull },
  retention_cleanup_status: { id: notNull, endpoint_open: notNull, schedule: nullable, next_run_at: nullable, updated_at: notNull },
  project_masking_rules: { project_id: notNull, rules: notNull, created_at: notNull, updated_at: notNull },
  spans: {
    ...(Object.fromEntries(spanColumnList.map((column) => [column.name, column.nullable === true ? nullable : notNull])) as ColumnsOf<Omit<SpansTable, 'received_at'>>),
    received_at: notNull,
  },
  trace_summaries: {
    project_id: notNull, trace_id: notNull, name: notNull, has_root: notNull, service_name: nullable, start_time: notNull,
    end_time: notNull, duration_us: notNull, span_count: notNull, error_count: notNull, models: notNull, response_models: notNull, vendors: notNull,
    services: notNull, input_tokens: nullable, output_tokens: nullable, total_tokens: nullable, cost_usd: nullable,
    session_id: nullable, user_id: nullable, text_filter: nullable, tokens_estimated: notNull, fold_day: notNull, words_in_blocks: notNull,
    prompts: notNull, tags: notNull,
  },
  trace_text_blocks: { project_id: notNull, block: notNull, words: notNull, filter: notNull },
  usage_rollups: {
    project_id: notNull, dimension: notNull, hour: notNull, value: notNull, traces: notNull, spans: notNull, errors: notNull,
    input_tokens: nullable, output_tokens: nullable, cost_usd: nullable, latency: notNull, error_traces: notNull, durations: notNull,
    hours: nullable,
  },
  session_summaries: {
    project_id: notNull, session_id: notNull, user_id: nullable, first_seen: notNull, last_seen: notNull, trace_count: notNull,
    total_tokens: nullable, cost_usd: nullable, fold_day: notNull,
  },
  summary_deltas: { id: notNull, created_at: notNull, trace_count: notNull, traces: notNull, usage: notNull },
  score_configs: {
    id: notNull, project_id: notNull, name: notNull, data_type: notNull, min_value: nullable, max_value: nullable, categories: nullable,
    description: notNull, created_at: notNull,
  },
  scores: {
    project_id: notNull, id: notNull, trace_id: nullable, span_id: nullable, session_id: nullable, name: notNull, data_type: notNull,
    value: nullable, string_value: nullable, comment: nullable, source: notNull, author: nullable, config_id: nullable,
    evaluator_id: nullable, created_at: notNull, updated_at: notNull,
  },
  score_rollups: { project_id: notNull, name: notNull, hour: notNull, scores: notNull, value_sum: notNull },
  score_dimensions: {
    project_id: notNull, score_id: notNull, name: notNull, created_at: notNull, value: notNull, trace_id: nullable, summarised: notNull, sought: notNull,
    service_name: nullable, models: nullable, response_models: nullable, vendors: nullable, services: nullable, prompts: nullable, tags: nullable,
    user_id: nullable, session_id: nullable,
  },
  judgment_dimensions: {
    project_id: notNull, job_id: notNull, created_at: notNull, finished_at: notNull, failed: notNull, trace_id: notNull, summarised: notNull, sought: notNull,
    service_name: nullable, models: nullable, response_models: nullable, vendors: nullable, services: nullable, prompts: nullable, tags: nullable,
    user_id: nullable, session_id: nullable,
  },
  session_figures: {
    project_id: notNull, session_id: notNull, first_hour: notNull, last_hour: notNull, first_day: notNull, traces: notNull, error_traces: notNull,
    spans: notNull, errors: notNull, input_tokens: notNull, output_tokens: notNull, cost_usd: notNull, durations: notNull, open_from: nullable,
  },
  user_week_figures: {
    project_id: notNull, week: notNull, user_id: notNull, traces: notNull, error_traces: notNull, spans: notNull, errors: notNull,
    input_tokens: notNull, output_tokens: notNull, cost_usd: notNull, durations: notNull,
  },
  session_figures_settled: { one: notNull, settled_until: notNull },
  group_member_days: { project_id: notNull, day: notNull, dimension: notNull, value: nullable, hours: notNull, user_masks: notNull, user_counts: notNull, session_masks: notNull, session_counts: notNull },
  group_member_day_marks: { project_id: notNull, day: notNull, built: notNull },
  group_member_days_settled: { one: notNull, settled_until: notNull },
  llm_connections: {
    id: notNull, project_id: notNull, name: notNull, provider: notNull, base_url: notNull, api_key_sealed: notNull, api_key_hint: notNull,
    created_at: notNull,
  },
  evaluators: {
    id: notNull, project_id: notNull, name: notNull, connection_id: notNull, model: notNull, prompt: nullable, prompt_name: nullable,
    prompt_label: nullable, score_name: notNull, filter: notNull, sampling_rate: notNull, enabled: notNull, created_at: notNull, updated_at: notNull,
    review_queue_id: nullable, review_below: nullable,
  },
  evaluation_runs: {
    id: notNull, project_id: notNull, evaluator_id: notNull, from_time: notNull, to_time: notNull, status: notNull, trace_count: nullable,
    created_at: notNull, finished_at: nullable,
  },
  evaluation_jobs: {
    id: notNull, project_id: notNull, evaluator_id: notNull, run_id: nullable, trace_id: notNull, status: notNull, attempts: notNull,
    error: nullable, skip_reason: nullable, score_id: nullable, judge_model: nullable, input_tokens: nullable, output_tokens: nullable, cost_usd: nullable,
    latency_ms: nullable, created_at: notNull, updated_at: notNull,
  },
  datasets: { id: notNull, project_id: notNull, name: notNull, description: notNull, metadata: notNull, version: notNull, created_at: notNull, updated_at: notNull },
  dataset_items: {
    dataset_id: notNull, id: notNull, valid_from: notNull, valid_to: nullable, position: notNull, input: notNull, expected_output: nullable, metadata: nullable,
    source_trace_id: nullable, source_span_id: nullable, created_at: notNull,
  },
  experiments: {
    id: notNull, project_id: notNull, dataset_id: notNull, dataset_version: notNull, name: notNull, description: notNull, metadata: notNull,
    kind: notNull, promptset_id: nullable, prompt_version: nullable, connection_id: nullable, model: nullable, model_settings: notNull,
    evaluator_ids: notNull, status: notNull, item_count: notNull, created_at: notNull, finished_at: nullable,
  },
  experiment_results: {
    id: notNull, project_id: notNull, experiment_id: notNull, dataset_item_id: notNull, status: notNull, attempts: notNull, error: nullable,
    output: nullable, trace_id: nullable, span_id: nullable, model: nullable, input_tokens: nullable, output_tokens: nullable, cost_usd: nullable,
    latency_ms: nullable, created_at: notNull, updated_at: notNull,
  },
  erasure_requests: {
    id: notNull, project_id: notNull, user_id: nullable, session_id: nullable, trace_count: notNull, status: notNull, recheck_at: nullable,
    deleted_spans: notNull, deleted_traces: notNull, deleted_sessions: notNull, deleted_scores: notNull, deleted_judgments: notNull,
    deleted_dataset_items: notNull, requested_by: nullable, created_at: notNull, updated_at: notNull, completed_at: nullable,
  },
  erasure_traces: { erasure_id: notNull, trace_id: notNull, erased: notNull },
  monitors: {
    id: notNull, project_id: notNull, name: notNull, metric: notNull, score_name: nullable, filter: notNull, window_kind: notNull, window_seconds: nullable,
    operator: notNull, threshold: notNull, evaluate_every_seconds: notNull, channel_ids: notNull, renotify_after_seconds: nullable, muted_until: nullable,
    budget_percents: nullable, budget_month: nullable, budget_notified_percent: nullable, state: notNull, state_value: nullable, state_changed_at: nullable,
    last_value: nullable, last_evaluated_at: nullable, next_evaluation_at: notNull, last_notified_at: nullable, created_at: notNull, updated_at: notNull,
  },
  monitor_events: {
    id: notNull, monitor_id: notNull, project_id: notNull, kind: notNull, state: notNull, value: nullable, threshold: notNull, window_from: notNull,
    window_to: notNull, channel_ids: notNull, created_at: notNull, dispatched_at: nullable,
  },
  dashboards: { id: notNull, project_id: notNull, name: notNull, widgets: notNull, is_default: notNull, created_at: notNull, updated_at: notNull },
  notification_channels: {
    id: notNull, project_id: notNull, name: notNull, type: notNull, url: nullable, address: nullable, secret_sealed: nullable, secret_hint: nullable,
    created_at: notNull, updated_at: notNull,
  },
  notification_deliveries: {
    id: notNull, channel_id: notNull, event_id: nullable, kind: notNull, payload: notNull, status: notNull, attempts: notNull,
    next_attempt_at: notNull, last_status: nullable, last_error: nullable, created_at: notNull, delivered_at: nullable,
  },
  notification_attempts: { id: notNull, delivery_id: notNull, attempted_at: notNull, ok: notNull, http_status: nullable, error: nullable, duration_ms: notNull },
  project_model_prices: {
    id: notNull, project_id: notNull, model: notNull, match: notNull, input_usd_per_mtok: notNull, output_usd_per_mtok: notNull,
    cache_read_usd_per_mtok: nullable, cache_write_usd_per_mtok: nullable, reasoning_usd_per_mtok: nullable,
    effective_from: nullable, created_at: notNull,
  },
  console_session_revocations: { session_id: notNull, expires_at: notNull, revoked_at: notNull },
}
