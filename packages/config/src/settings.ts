import { FormatRegistry, Type } from '@sinclair/typebox'
import { Cron } from 'croner'

// Every environment variable Tracewell reads (docs/settings.md), grouped by concern. Services compose the
// groups they need in services.ts. Keys are the variable names themselves, so docs/settings.md, the compose
// file and Kubernetes manifests can be checked against this file.

const Port = (fallback: number) =>
  Type.Integer({ minimum: 0, maximum: 65535, default: fallback, description: 'TCP port to listen on (0–65535)' })

export const serverSettings = (defaultPort: number) => ({
  PORT: Port(defaultPort),
  HOST: Type.String({ default: '0.0.0.0', minLength: 1, description: 'interface to bind, e.g. 0.0.0.0 or 127.0.0.1' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info', description: 'one of fatal, error, warn, info, debug, trace, silent' },
  ),
  BODY_TIMEOUT_MS: Type.Integer({
    minimum: 1_000,
    maximum: 3_600_000,
    default: 30_000,
    description: 'how long a client may take to send a whole request (headers and body), in ms; a slower one is answered 408 and disconnected (default 30000)',
  }),
  TRUST_PROXY: Type.String({
    default: 'false',
    pattern: '^(true|false|[0-9A-Fa-f.:/]+(, ?[0-9A-Fa-f.:/]+)*)$',
    description: "whose X-Forwarded-For is believed for a request's address (the audit log, slowing failed key checks): false (the connection's own address, the default), true (any proxy's), or the proxies' addresses and CIDR ranges, comma-separated",
  }),
})

const PostgresUrl = Type.String({
  pattern: '^postgres(ql)?://',
  description: 'a postgres:// connection URL, e.g. postgres://postgres@127.0.0.1:5432/tracewell',
})
export const RedisUrl = Type.String({ pattern: '^rediss?://', description: 'a redis:// connection URL, e.g. redis://127.0.0.1:6379' })

export const databaseSettings = {
  DATABASE_URL: PostgresUrl,
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10, description: 'connections in the Postgres pool (1–200)' }),
}

export const embeddedDatabaseSettings = {
  DATABASE_URL: Type.Optional(PostgresUrl),
  DATABASE_POOL_SIZE: databaseSettings.DATABASE_POOL_SIZE,
  DATA_DIR: Type.String({ default: '.data', minLength: 1, description: 'directory for the embedded database when DATABASE_URL is unset' }),
}

// Either one Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES): queueTargetRule says
// which services need one of them. The queue's keys get their cluster hash tags per shard
// (packages/queue/src/span-batch.shards.ts), so QUEUE_PREFIX itself never holds braces.
const RedisClusterNodes = Type.String({
  pattern: '^[A-Za-z0-9_.-]+:[0-9]{1,5}(,[A-Za-z0-9_.-]+:[0-9]{1,5})*$',
  description: 'seed nodes of a Redis Cluster as host:port,host:port,… (instead of REDIS_URL), e.g. redis-0:6379,redis-1:6379',
})

export const queueSettings = {
  REDIS_URL: Type.Optional(RedisUrl),
  REDIS_CLUSTER_NODES: Type.Optional(RedisClusterNodes),
  REDIS_CLUSTER_PASSWORD: Type.Optional(Type.String({ minLength: 1, description: 'password of the Redis Cluster nodes (AUTH), when they require one' })),
  QUEUE_PREFIX: Type.String({ default: 'tracewell', pattern: '^[A-Za-z0-9_.-]+$', description: 'BullMQ key prefix (letters, digits, _ . -)' }),
  QUEUE_SHARDS: Type.Integer({
    minimum: 1,
    maximum: 256,
    default: 1,
    description: 'BullMQ queues the span queue is split into, each on its own cluster hash slot; a project always goes to the same one (1–256, default 1)',
  }),
}

/** REDIS_URL and REDIS_CLUSTER_NODES: exactly one where a Redis queue is required, at most one elsewhere. */
export const queueTargetRule = { exactlyOneOf: ['REDIS_URL', 'REDIS_CLUSTER_NODES'] } as const
export const optionalQueueTargetRule = { atMostOneOf: ['REDIS_URL', 'REDIS_CLUSTER_NODES'] } as const

export const embeddedQueueSettings = {
  REDIS_URL: Type.Optional(RedisUrl),
  REDIS_CLUSTER_NODES: Type.Optional(RedisClusterNodes),
  REDIS_CLUSTER_PASSWORD: queueSettings.REDIS_CLUSTER_PASSWORD,
  QUEUE_PREFIX: queueSettings.QUEUE_PREFIX,
  QUEUE_SHARDS: queueSettings.QUEUE_SHARDS,
}

/** Where ingest waits for Redis replicas (WAIT) before it answers 200 (docs/operations.md#redis). */
export const replicaWaitSettings = {
  QUEUE_REPLICA_ACKS: Type.Integer({
    minimum: 0,
    maximum: 16,
    default: 0,
    description: 'replicas of the Redis master that must hold a queued request (Redis WAIT) before ingest answers 200; 0 answers once the master has it (0–16, default 0)',
  }),
  QUEUE_REPLICA_TIMEOUT_MS: Type.Integer({
    minimum: 10,
    maximum: 60_000,
    default: 1_000,
    description: 'how long ingest waits for QUEUE_REPLICA_ACKS replicas before it answers 503, in ms (default 1000)',
  }),
}

/**
 * Per-span limits as OpenTelemetry defines them, with its defaults (the value length: 1 MiB where
 * OpenTelemetry sets none). Ingest and the writer must have the same: the writer decodes each body
 * again and stores what its limits keep.
 */
export const spanLimitSettings = {
  SPAN_ATTRIBUTE_COUNT_LIMIT: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 128,
    description: 'attributes kept per span, event, link and resource; the rest are counted in otel.dropped_attributes_count (default 128, as OpenTelemetry)',
  }),
  SPAN_EVENT_COUNT_LIMIT: Type.Integer({ minimum: 0, maximum: 100_000, default: 128, description: 'events kept per span; the rest are counted in otel.dropped_events_count (default 128, as OpenTelemetry)' }),
  SPAN_LINK_COUNT_LIMIT: Type.Integer({ minimum: 0, maximum: 100_000, default: 128, description: 'links kept per span; the rest are counted in otel.dropped_links_count (default 128, as OpenTelemetry)' }),
  ATTRIBUTE_VALUE_LENGTH_LIMIT: Type.Integer({
    minimum: 1_024,
    maximum: 16 * 1024 * 1024,
    default: 1024 * 1024,
    description: 'UTF-16 code units kept of a string attribute value; a longer one is cut and ends with a marker naming its length (default 1048576)',
  }),
}

/**
 * The ingest service's alone: npm start's in-process queue stores span records, which a worker
 * thread would have to send back whole, so it decodes every body on its main thread.
 */
export const ingestServiceSettings = {
  DECODE_THREADS: Type.Integer({
    minimum: 0,
    maximum: 64,
    default: 2,
    description: 'worker threads that decode bodies over 256 KiB, so that one large body never stalls other requests; 0 decodes every body on the main thread (default 2)',
  }),
}

export const ingestSettings = {
  GRPC_PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 4317,
    description: 'TCP port of the OTLP/gRPC receiver, on HOST (default 4317, the OTLP standard; 0 picks a free port)',
  }),
  MAX_BODY_BYTES: Type.Integer({ minimum: 1024, default: 10 * 1024 * 1024, description: 'largest request body as sent, in bytes (default 10 MiB)' }),
  MAX_INFLATED_BYTES: Type.Integer({ minimum: 1024, default: 50 * 1024 * 1024, description: 'largest body after gzip/deflate inflation, in bytes (default 50 MiB)' }),
  MAX_SPANS_PER_REQUEST: Type.Integer({ minimum: 1, default: 10_000, description: 'most spans accepted in one request (default 10000)' }),
  // Bodies up to 256 KiB are parsed without a count and hold at most ~131,000 values, so the
  // minimum keeps the limit true for every body.
  MAX_JSON_VALUES: Type.Integer({
    minimum: 150_000,
    default: 1_000_000,
    description: 'most JSON values (objects, arrays, strings, numbers, literals) in one JSON body; bounds the parse work of one request (default 1000000)',
  }),
  MAX_PROTOBUF_FIELDS: Type.Integer({
    minimum: 150_000,
    default: 1_000_000,
    description: 'most protobuf fields (nested messages counted field by field) in one protobuf body; bounds its parse work as MAX_JSON_VALUES does for JSON (default 1000000)',
  }),
  QUEUE_MAX_BACKLOG: Type.Integer({ minimum: 1, default: 200_000, description: 'waiting spans in the queue above which ingest answers 429 (default 200000)' }),
  QUEUE_MAX_BACKLOG_BYTES: Type.Integer({
    minimum: 1024,
    default: 512 * 1024 * 1024,
    description: 'queued body bytes (span records, 1.1–1.6 times their request bodies) waiting in the queue above which ingest answers 429, bounding Redis memory (default 512 MiB)',
  }),
  ENQUEUE_MAX_SPANS_PER_JOB: Type.Integer({ minimum: 1, default: 2_000, description: 'most spans grouped into one queue job; a larger request is a job of its own (default 2000)' }),
  ENQUEUE_LINGER_MS: Type.Integer({
    minimum: 0,
    maximum: 1_000,
    default: 5,
    description: 'how long the requests of a queue write may wait for others to join them, in ms, unless they hold 200 spans already; 0 writes at once (default 5)',
  }),
  ENQUEUE_LINGER_QUIET_MS: Type.Integer({
    minimum: 1,
    maximum: 1_000,
    default: 1,
    description: 'a queue write’s linger ends early once no request has arrived for this long, in ms: a burst of requests is written as soon as it is in (default 1)',
  }),
}

/**
 * Per-project ingest rate limits (docs/settings.md#ingest-rate-limits): the default of every
 * project, which a project's own limit (the management API, the console) replaces. Off by
 * default: a self-hosted install often has one project, and the queue's per-project share of the
 * backlog already keeps one project's flood from refusing the others.
 */
export const ingestRateLimitSettings = {
  INGEST_RATE_LIMIT_SPANS_PER_SECOND: Type.Integer({
    minimum: 0,
    maximum: 10_000_000,
    default: 0,
    description: 'spans per second each project may send, on average, before ingest answers 429; 0 sets no default limit (default 0)',
  }),
  INGEST_RATE_LIMIT_BURST: Type.Integer({
    minimum: 0,
    maximum: 100_000_000,
    default: 0,
    description: 'spans a project may send at once above its rate (the token bucket size); 0 means twice INGEST_RATE_LIMIT_SPANS_PER_SECOND (default 0)',
  }),
}

/** How soon ingest sees a project's new limit. */
export const ingestRateLimitRefreshSettings = {
  INGEST_RATE_LIMIT_REFRESH_MS: Type.Integer({
    minimum: 100,
    maximum: 60_000,
    default: 5_000,
    description: 'how often ingest reloads the projects’ own rate limits, in ms: a change applies within this (default 5000)',
  }),
}

/**
 * Masking at ingest (docs/settings.md#masking): the rules of every project that has none of its
 * own, and how soon ingest sees a project's changed rules.
 */
export const maskingSettings = {
  MASKING_DEFAULT_RULES: Type.String({
    default: '[]',
    description:
      'masking rules of every project without rules of its own, as a JSON array of {detector, pattern?, attributes?, replacement?} (docs/api.md#masking), e.g. [{"detector":"secret"}] (default [], nothing masked)',
  }),
  MASKING_RULES_REFRESH_MS: Type.Integer({
    minimum: 100,
    maximum: 5_000,
    default: 2_000,
    description: 'how often ingest reloads the projects’ masking rules, in ms: a change applies within this (100–5000, default 2000)',
  }),
}

export const writerSettings = {
  // Many at once: small traces come as small jobs, and the more of them share a COPY (and its
  // commit), the less each costs. WRITER_MAX_BODY_BYTES bounds their memory instead.
  WRITER_CONCURRENCY: Type.Integer({
    minimum: 1,
    maximum: 64,
    default: 32,
    description: 'queue jobs processed at once per writer (1–64, default 32); jobs ready together are stored in one COPY',
  }),
  WRITER_MAX_BODY_BYTES: Type.Integer({
    minimum: 1024 * 1024,
    // 16 MiB held a peak RSS above 256 MiB on 100-span traces, at no less CPU a span (docs/benchmarks.md, 2026-12-06).
    default: 8 * 1024 * 1024,
    description: 'queued body bytes of the jobs a writer holds at once, at most (default 8388608, 8 MiB: the records of a few jobs of grouped 100-span requests); a larger job is taken alone',
  }),
  WRITER_LINGER_MS: Type.Integer({
    minimum: 0,
    maximum: 1_000,
    default: 300,
    description:
      'how long a job ready for a COPY may wait for others to share it, in ms, unless 1000 spans wait already or every job the worker of one shard holds (WRITER_CONCURRENCY over QUEUE_SHARDS); a writer that keeps up with its queue would otherwise store each small job in a COPY and a transaction of its own (default 300; 0 starts a COPY at once)',
  }),
  WRITER_MAX_ATTEMPTS: Type.Integer({ minimum: 1, default: 12, description: 'tries per job before it goes to the failed set (default 12)' }),
  // Short lock, renewed by the worker every half of it, and a frequent stalled check: a job whose
  // writer died or lost Redis mid-job is redone within WRITER_LOCK_DURATION_MS +
  // WRITER_STALLED_INTERVAL_MS (about 10 s), instead of BullMQ's minute. A writer whose event loop
  // stalls longer than the lock only makes the job run twice; the store is idempotent.
  WRITER_LOCK_DURATION_MS: Type.Integer({
    minimum: 1_000,
    default: 8_000,
    description: 'how long a writer holds a job without renewing it (it renews every half of this) before it counts as stalled and is redone, in ms (default 8000)',
  }),
  WRITER_STALLED_INTERVAL_MS: Type.Integer({
    minimum: 500,
    default: 2_000,
    description: 'how often writers look for stalled jobs (e.g. of a killed writer), in ms (default 2000)',
  }),
  SUMMARY_POLL_MS: Type.Integer({
    minimum: 10,
    maximum: 5_000,
    default: 200,
    description: 'how long a writer\'s summariser waits, when nothing is left to fold or another writer is folding, before it looks again, and the least time between the starts of its folds while each finds under half of SUMMARY_FOLD_MAX_TRACES, in ms (default 200)',
  }),
  SUMMARY_FOLD_MAX_TRACES: Type.Integer({
    minimum: 100,
    maximum: 100_000,
    // 10,000 let the fold's COPY of new summaries run past a second with two writers on two cores
    // (784–1,051 ms); at 5,000 it ran 358–417 ms, for less CPU a span (docs/benchmarks.md, 2026-12-01).
    default: 5_000,
    description: 'traces folded into the summaries per transaction, at most (default 5000); bounds each fold\'s statements',
  }),
  ERASURE_BATCH_TRACES: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 200,
    description: 'traces an erasure deletes per transaction, with their spans, summaries, scores, judgments and dataset items (default 200)',
  }),
  ERASURE_POLL_MS: Type.Integer({
    minimum: 10,
    maximum: 60_000,
    default: 1_000,
    description: 'how often a writer looks for erasure requests with work to do, in ms (default 1000)',
  }),
  // Long enough for the spans queued before an erasure's first pass ended to be stored, retries
  // included (WRITER_MAX_ATTEMPTS with backoff from 1 s), before the re-check looks again.
  ERASURE_RECHECK_AFTER_MS: Type.Integer({
    minimum: 0,
    maximum: 86_400_000,
    default: 120_000,
    description: 'how long after an erasure\'s first pass its re-check looks again for spans, scores and judgments of the subject that arrived meanwhile, in ms (default 120000)',
  }),
}

export const llmConnectionSettings = {
  LLM_CONNECTION_ENCRYPTION_KEY: Type.Optional(
    Type.String({
      pattern: '^[0-9a-fA-F]{64}$',
      description: 'the key that seals the API keys of LLM connections at rest: 64 hex characters, e.g. from `openssl rand -hex 32`; the same wherever connections are made and used',
    }),
  ),
}

// What Tracewell's own calls out (models, judges) may reach: docs/operations.md#outbound-policy.
const Octet = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])'
const CidrEntry = `(?:(?:${Octet}\\.){3}${Octet}/(?:3[0-2]|[12]?[0-9])|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/(?:12[0-8]|1[01][0-9]|[1-9]?[0-9]))`

export const outboundSettings = {
  OUTBOUND_ALLOW_CIDRS: Type.Optional(
    Type.String({
      pattern: `^\\s*${CidrEntry}(?:\\s*,\\s*${CidrEntry})*\\s*$`,
      description: 'comma-separated CIDRs that calls to models and judges may reach although the outbound policy refuses them (loopback, private, link-local, …), e.g. 127.0.0.1/32 for a model server on the same machine',
    }),
  ),
  OUTBOUND_MAX_RESPONSE_BYTES: Type.Integer({
    minimum: 1024,
    maximum: 1024 * 1024 * 1024,
    default: 10 * 1024 * 1024,
    description: 'the most bytes of one reply to a call out that are read; a longer reply is cut there and the call fails (default 10485760, 10 MiB)',
  }),
  OUTBOUND_CONNECT_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 120_000,
    default: 10_000,
    description: 'how long a call out may take to resolve its host and connect, in ms (default 10000)',
  }),
}

// Where monitor notifications go (docs/api.md#notification-channels, docs/operations.md#notifications).
export const notificationSettings = {
  SMTP_URL: Type.Optional(
    Type.String({
      pattern: '^smtps?://',
      description: 'the mail server email notification channels send through: smtp://user:pass@host:587 (STARTTLS when offered) or smtps://…:465; unset, email channels cannot be made',
    }),
  ),
  MAIL_FROM: Type.Optional(Type.String({ minLength: 3, maxLength: 320, description: 'the From of notification emails, e.g. "Tracewell <alerts@example.com>"; needed with SMTP_URL' })),
  PUBLIC_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^?#]+$',
      description: 'the address people open the console at, e.g. https://tracewell.example.com: notifications link to traces on it (unset: they carry the console path alone)',
    }),
  ),
  // A person waits on a test message, and a worker slot on every try: a receiver that hangs must not hold either long.
  NOTIFICATION_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000, description: 'how long one notification try may take, connecting to reply, in ms (default 10000)' }),
  NOTIFICATION_RETRY_BASE_MS: Type.Integer({
    minimum: 10,
    maximum: 3_600_000,
    default: 30_000,
    description: 'the wait before a failed notification\'s second try, doubled for each next one (at most an hour apart, for 24 h), in ms (default 30000)',
  }),
  NOTIFICATION_POLL_INTERVAL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 1_000, description: 'how often the delivery worker looks for new monitor events and due deliveries, in ms (default 1000)' }),
}

export const evaluatorSettings = {
  EVALUATOR_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 4, description: 'judgments run at once per evaluator worker (1–64)' }),
  EVALUATOR_MAX_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 20, default: 5, description: 'tries per judgment before it is recorded as failed (1–20)' }),
  EVALUATOR_BACKOFF_MS: Type.Integer({ minimum: 10, default: 2_000, description: 'delay before the first retry of a judgment, doubled for each next one, in ms' }),
  EVALUATOR_POLL_INTERVAL_MS: Type.Integer({ minimum: 100, default: 5_000, description: 'how often the worker looks for traces to judge and runs to start, in ms' }),
  EVALUATOR_STATEMENT_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 5_000,
    description: 'Postgres statement timeout of each statement of the look for traces to judge and runs to start, in ms (100–600000)',
  }),
  EVALUATOR_TRACE_QUIET_MS: Type.Integer({
    minimum: 0,
    default: 10_000,
    description: 'a trace is judged once no span of it has arrived for this long, in ms (its spans may come in several requests)',
  }),
  EVALUATOR_LOOKBACK_MS: Type.Integer({
    minimum: 60_000,
    default: 3_600_000,
    description: 'how far back, by start time, the worker looks for new traces not yet judged, in ms (older ones: an on-demand run)',
  }),
  EVALUATOR_JUDGE_TIMEOUT_MS: Type.Integer({ minimum: 1_000, default: 60_000, description: 'how long one call to the judge model may take, in ms' }),
  MONITOR_POLL_INTERVAL_MS: Type.Integer({
    minimum: 100,
    maximum: 10_000,
    default: 1_000,
    description: 'how often the worker looks for monitors due an evaluation, in ms (at most 10000: a monitor may ask for every 10 s)',
  }),
  MONITOR_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 32, default: 4, description: 'monitors evaluated at once per evaluator worker (1–32), each a connection of the pool' }),
  EXPERIMENT_CONCURRENCY: Type.Integer({
    minimum: 1,
    maximum: 64,
    default: 4,
    description: 'experiment items run at once per evaluator worker (1–64): the bound on calls to the models under test, apart from the judges',
  }),
  EXPERIMENT_CALL_TIMEOUT_MS: Type.Integer({ minimum: 1_000, default: 120_000, description: 'how long one call of an experiment or playground run to its model may take, in ms' }),
}

export const keySettings = {
  KEY_CACHE_TTL_MS: Type.Integer({
    minimum: 0,
    maximum: 5000,
    default: 5000,
    description: 'how long a verified API key is trusted before it is re-checked, in ms (0–5000: a revoked key stops working within 5 s)',
  }),
  KEY_OUTAGE_GRACE_MS: Type.Integer({
    minimum: 0,
    default: 15 * 60_000,
    description: 'while the database cannot be reached, how long a key verified before keeps working, in ms (default 900000, 15 minutes)',
  }),
}

export const querySettings = {
  DATABASE_READ_URL: Type.Optional(Type.String({
    pattern: '^postgres(ql)?://',
    description: 'a streaming replica of DATABASE_URL: the trace, session and usage queries read from it once it has replayed what this process wrote, else from DATABASE_URL',
  })),
  QUERY_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 10_000,
    description: 'statement timeout of the trace, session and usage queries, in ms; a query that runs longer is stopped and answered 400 (default 10000)',
  }),
}

// A secret compared with a header value: HTTP trims the whitespace around a header value, so a
// secret with spaces could never match, and one of a few characters can be guessed.
const HeaderSecret = (description: string) => Type.String({ minLength: 32, pattern: '^[\\x21-\\x7e]+$', description })

export const adminSettings = {
  ADMIN_API_KEY: Type.Optional(HeaderSecret('admin secret for POST /api/teams (at least 32 printable characters, no spaces)')),
}

export const consoleSettings = {
  SESSION_SECRET: Type.Optional(
    Type.String({
      minLength: 32,
      description: 'secret that signs the web console session cookies (at least 32 characters, the same on every replica)',
    }),
  ),
}

// People, their sessions and how they sign in (docs/accounts.md).
export const accountSettings = {
  SIGNUP: Type.Union([Type.Literal('invite'), Type.Literal('open'), Type.Literal('off')], {
    default: 'invite',
    description: 'who may make an account: invite (only from an invitation, the default), open (anyone, who then has no team until invited), off (nobody, not even from an invitation: accounts come from single sign-on or INIT_USER_EMAIL)',
  }),
  INIT_USER_EMAIL: Type.Optional(Type.String({ minLength: 3, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$', description: 'email of the owner of the default team, made at start while no team has an owner (with INIT_USER_PASSWORD)' })),
  INIT_USER_PASSWORD: Type.Optional(Type.String({ minLength: 12, maxLength: 256, description: 'password of the INIT_USER_EMAIL owner (at least 12 characters)' })),
  SESSION_IDLE_HOURS: Type.Integer({ minimum: 1, maximum: 24 * 365, default: 168, description: 'a signed-in session ends after this many hours without a request (default 168, 7 days)' }),
  SESSION_MAX_HOURS: Type.Integer({ minimum: 1, maximum: 24 * 365, default: 720, description: 'a signed-in session ends this many hours after sign-in whatever its use (default 720, 30 days)' }),
  CONSOLE_KEY_SIGN_IN: Type.Union([Type.Literal('true'), Type.Literal('false')], {
    default: 'false',
    description: 'true keeps signing the console in with a team key once an owner account exists (before that it always works, for installs that upgrade)',
  }),
}

const TeamRoleSetting = Type.Union([Type.Literal('viewer'), Type.Literal('member'), Type.Literal('admin'), Type.Literal('owner')], {
  default: 'viewer',
  description: 'the team role of a person who joins the default team through OIDC_ISSUER and whom OIDC_ROLE_CLAIM maps to none: viewer, member, admin or owner (default viewer)',
})

// The install's own OpenID Connect provider (docs/accounts.md#single-sign-on); teams may add their
// own through the API. New accounts join the default team (the oldest).
export const ssoSettings = {
  OIDC_ISSUER: Type.Optional(Type.String({ pattern: '^https?://[^?#\\s]+$', description: 'the issuer URL of the OpenID Connect provider people sign in with, e.g. https://acme.okta.com (its /.well-known/openid-configuration is read); needs OIDC_CLIENT_ID and PUBLIC_URL' })),
  OIDC_CLIENT_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'the client id Tracewell is registered with at OIDC_ISSUER; its redirect URI is <PUBLIC_URL>/api/auth/oidc/callback' })),
  OIDC_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'the client secret at OIDC_ISSUER (unset: a public client, PKCE alone)' })),
  OIDC_DISPLAY_NAME: Type.String({ minLength: 1, maxLength: 100, default: 'Single sign-on', description: 'the label of the sign-in button, e.g. "Okta" (default "Single sign-on")' }),
  OIDC_SCOPES: Type.String({ pattern: '^openid( [\\x21-\\x7e]+)*$', default: 'openid email profile', description: 'the scopes asked for, space-separated, starting with openid (default "openid email profile"; add groups where the provider needs it for OIDC_ROLE_CLAIM)' }),
  OIDC_ALLOWED_DOMAINS: Type.Optional(Type.String({
    pattern: '^(\\*|[A-Za-z0-9.-]+(,\\s*[A-Za-z0-9.-]+)*)$',
    description: 'email domains whose people get an account at their first sign-in, comma-separated, e.g. acme.com,acme.co.uk, or * for any; unset, only people who already have an account (same verified email) may sign in',
  })),
  OIDC_DEFAULT_ROLE: TeamRoleSetting,
  OIDC_ROLE_CLAIM: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_:/.-]+$', description: 'the ID-token claim that says a person\'s role, e.g. groups, or a dotted path such as realm_access.roles; its values go through OIDC_ROLE_MAP (or are role names), the highest wins, at every sign-in' })),
  OIDC_ROLE_MAP: Type.Optional(Type.String({
    pattern: '^[^=,]+=(viewer|member|admin|owner)(,[^=,]+=(viewer|member|admin|owner))*$',
    description: 'claim values to team roles, e.g. tracewell-admins=admin,engineering=member (unset: values that are role names stand for themselves)',
  })),
}

const InitKey = Type.String({ minLength: 32, maxLength: 256, pattern: '^[\\x21-\\x7e]+$', description: 'an API key of at least 32 printable characters' })

export const bootstrapSettings = {
  INIT_TEAM_NAME: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'name of the team to create at start' })),
  INIT_TEAM_API_KEY: Type.Optional(InitKey),
  INIT_PROJECT_NAME: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'name of the project to create at start' })),
  INIT_PROJECT_ID: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'id of the project to create at start (1–64 of A-Z a-z 0-9 _ -)' })),
  INIT_PROJECT_API_KEY: Type.Optional(InitKey),
}

export const janitorSettings = {
  CRON_API_KEY: Type.Optional(HeaderSecret('secret expected in the cron-api-key header (at least 32 printable characters, no spaces); unset leaves cleanup open')),
  CLEANUP_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000, description: 'spans deleted per statement during cleanup (default 10000)' }),
  CLEANUP_TIME_BUDGET_MS: Type.Integer({ minimum: 1, default: 240_000, description: 'a cleanup run stops after this many ms and reports what is left (default 240000)' }),
  CLEANUP_CUTOFF: Type.Union([Type.Literal('day'), Type.Literal('exact')], {
    default: 'exact',
    description: "exact: spans go at now − retention, the rest of their day deleted row by row; day: once their whole UTC day is past retention (kept up to a day longer), so an expired day is one dropped partition (default exact)",
  }),
  CLEANUP_LOCK_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: 60_000, default: 1_000, description: 'how long dropping an expired day partition of spans waits for its lock before leaving it to the next run (default 1000)' }),
  AUDIT_LOG_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36_500, default: 365, description: 'days the audit log keeps an entry; each cleanup run removes older ones (default 365)' }),
}

// A cron expression croner accepts (5 fields, or 6 with seconds first; @daily and the like), or "off".
FormatRegistry.Set('retention-schedule', (value) => {
  if (value === 'off') return true
  try {
    new Cron(value, { paused: true, timezone: 'UTC' }).stop()
    return true
  } catch {
    return false
  }
})

/** `npm start` and the all-in-one image run the cleanup themselves; the janitor service is called by a CronJob instead. */
export const retentionScheduleSettings = {
  RETENTION_SCHEDULE: Type.String({
    format: 'retention-schedule',
    default: '0 3 * * *',
    description: 'when npm start runs the retention cleanup: a cron expression in UTC (5 fields, or 6 with seconds first; @daily, @hourly), or off (default "0 3 * * *", daily at 03:00 UTC)',
  }),
}

export const startupSettings = {
  STARTUP_RETRY_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 3600,
    default: 60,
    description: 'how long a process retries an unreachable Postgres or Redis at start before it exits non-zero, in s (default 60)',
  }),
}
