import { Type, type Static, type TOptional, type TSchema } from '@sinclair/typebox'
import type { AttributeMap } from './any-value.ts'

// A span's shape, once: the decoded record (SpanRecordSchema) that ingest validates and queues and
// the writer stores, and the stored span (StoredSpanSchema) that the trace API returns, the
// control plane's route schemas declare and the console reads. Both share the fields a span is
// stored with in columns of their own (spanOriginFields); their types follow with Static.

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
const NullableString = Nullable(Type.String())
const NullableInteger = Nullable(Type.Integer())
const NullableNumber = Nullable(Type.Number())

/** Attributes in the map form (name → OTLP AnyValue), validated by the decoders, not by this schema. */
export const AttributeMapSchema = Type.Unsafe<AttributeMap>(Type.Record(Type.String(), Type.Unknown(), { description: 'attribute name → OTLP AnyValue (stringValue, intValue, …)' }))

/** ISO 8601 with microseconds, UTC. */
export const IsoDateSchema = Type.String({ format: 'date-time' })

export const CostSourceSchema = Type.Union([Type.Literal('attribute'), Type.Literal('custom_price'), Type.Literal('price_table')], {
  description: 'attribute: reported by the caller; custom_price: the project’s own price; price_table: the built-in table',
})
export type CostSource = Static<typeof CostSourceSchema>

export const SpanEventSchema = Type.Object({ timeUnixNano: Type.String(), name: Type.String(), attributes: AttributeMapSchema })
export type SpanEvent = Static<typeof SpanEventSchema>

export const SpanLinkSchema = Type.Object({ traceId: Type.String(), spanId: Type.String(), traceState: NullableString, attributes: AttributeMapSchema })
export type SpanLink = Static<typeof SpanLinkSchema>

/** Where a span came from and which model it used: what is stored in columns of its own (docs/semantic-conventions.md). */
export const spanOriginFields = {
  serviceName: NullableString,
  serviceVersion: NullableString,
  scopeName: NullableString,
  scopeVersion: NullableString,
  llmVendor: NullableString,
  llmModel: Nullable(Type.String({ description: 'the requested model (the response’s when none was reported)' })),
  llmResponseModel: NullableString,
  llmRequestType: Nullable(Type.String({ description: 'the operation (chat, text_completion, embeddings, invoke_agent, …)' })),
  inputTokens: NullableInteger,
  outputTokens: NullableInteger,
  totalTokens: NullableInteger,
  cachedInputTokens: NullableInteger,
  cacheWriteInputTokens: NullableInteger,
  reasoningTokens: NullableInteger,
  tokensEstimated: Type.Boolean({
    description: 'the token counts, and a cost computed from them, are estimates: the span says so, or it is a streamed call of an instrumentation that counts streams itself',
  }),
  sessionId: NullableString,
  userId: NullableString,
  inputCostUsd: NullableNumber,
  outputCostUsd: NullableNumber,
  totalCostUsd: NullableNumber,
  costSource: Nullable(CostSourceSchema),
}

// Fields added after the first release: optional in the record, since inline queue jobs of the
// previous version may lack them (stored as null).
const { serviceName, serviceVersion, scopeName, scopeVersion, llmVendor, llmModel, llmRequestType, inputTokens, outputTokens, totalTokens, ...laterOriginFields } = spanOriginFields

/**
 * The validated, format-independent form of one span: what ingest puts on the queue and what the
 * writer stores. Every field is JSON-serialisable because it travels through Redis; changes must
 * stay additive (jobs of the previous version may still be in flight).
 */
export const SpanRecordSchema = Type.Object({
  traceId: Type.String({ description: '32 lowercase hex, not all zero' }),
  spanId: Type.String({ description: '16 lowercase hex, not all zero' }),
  parentSpanId: Nullable(Type.String({ description: 'null for a root span' })),
  name: Type.String(),
  kind: Type.Integer({ description: '0–5, OTLP numbering' }),
  startTimeUnixNano: Type.String({ description: 'decimal, nanoseconds since the epoch' }),
  endTimeUnixNano: Type.String({ description: 'decimal, not before the start' }),
  durationNs: Type.String({ description: 'end − start, decimal' }),
  traceState: NullableString,
  statusCode: Type.Integer({ description: '0–2' }),
  statusMessage: NullableString,
  attributes: AttributeMapSchema,
  resourceAttributes: AttributeMapSchema,
  events: Type.Array(SpanEventSchema),
  links: Type.Array(SpanLinkSchema),
  serviceName,
  serviceVersion,
  scopeName,
  scopeVersion,
  llmVendor,
  llmModel,
  llmRequestType,
  inputTokens,
  outputTokens,
  totalTokens,
  ...(Object.fromEntries(Object.entries(laterOriginFields).map(([name, schema]) => [name, Type.Optional(schema)])) as {
    [K in keyof typeof laterOriginFields]: TOptional<(typeof laterOriginFields)[K]>
  }),
})
export type SpanRecord = Static<typeof SpanRecordSchema>

/**
 * A record whose attributes and events may still be `Text`: the JSON text ingest queued, which the
 * writer stores as it is (@tracewell/otlp SpanRecordToStore). The text's type is a parameter, so
 * that the shape needs no runtime code (the console reads it too).
 */
export type SpanRecordWithText<Text> = Omit<SpanRecord, 'attributes' | 'events'> & {
  attributes: SpanRecord['attributes'] | Text
  events: SpanRecord['events'] | Text
}

/** A stored span as the trace API returns it: every stored field, attributes in the map form. */
export const StoredSpanSchema = Type.Object({
  traceId: Type.String(),
  spanId: Type.String(),
  parentSpanId: NullableString,
  name: Type.String(),
  kind: Type.Integer(),
  startTime: IsoDateSchema,
  endTime: IsoDateSchema,
  startTimeUnixNano: Type.String(),
  endTimeUnixNano: Type.String(),
  durationNs: Type.String(),
  traceState: NullableString,
  status: Type.Object({ code: Type.Integer(), message: NullableString }),
  ...spanOriginFields,
  attributes: AttributeMapSchema,
  resourceAttributes: AttributeMapSchema,
  events: Type.Array(SpanEventSchema),
  links: Type.Array(SpanLinkSchema),
  receivedAt: IsoDateSchema,
})
export type StoredSpan = Static<typeof StoredSpanSchema>
