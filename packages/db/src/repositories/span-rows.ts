// A stored span's columns, described once: which field of the span (@tracewell/span-schema) each
// column holds and how it is stored. The table's type (database.ts), its declared columns, the
// COPY encoder and the statement insert (@tracewell/write-path) and the row-to-DTO mapping
// (spans.repository.ts) all follow from this description. A span's origin fields (where it came
// from, which model it used: spanOriginFields) are columns by rule, named in snake_case and stored
// by their schema's type, so that adding one touches that schema, a migration and where its value
// is derived (docs/architecture.md#span-columns).

import type { JsonTextBytes } from '@tracewell/json-text'
import { spanOriginFields, type SpanRecord, type SpanRecordWithText } from '@tracewell/span-schema'

/** What a span says about where it came from and which model it used, stored in columns of their own. */
export type SpanOriginFields = Pick<SpanRecord, keyof typeof spanOriginFields>

/** One span to store: the decoded record (@tracewell/span-schema), its JSON perhaps still as queued, and its project. */
export type SpanInsert = SpanRecordWithText<JsonTextBytes> & { projectId: string }

/** A stored span's fields as they read back: its JSON parsed. */
export type StoredSpanFields = SpanRecord & { projectId: string }

/** A span without its project: what a ProjectSpanSource yields. */
export type SpanFields = Omit<SpanInsert, 'projectId'>

/**
 * How a column is stored: its Postgres type, how the COPY encodes it and how a read row gives it
 * back. `int64Decimal` is a bigint the record holds as a decimal string (it may exceed 2^53);
 * `int64` one it holds as a number (token counts); `timestamp` nanoseconds since the epoch, stored
 * to the microsecond; `sharedJsonb` a jsonb value the spans of one resource share by reference.
 */
export type SpanColumnKind = 'text' | 'int16' | 'int64' | 'int64Decimal' | 'timestamp' | 'numeric' | 'bool' | 'jsonb' | 'sharedJsonb'

export interface SpanColumn {
  /** The span's field (SpanInsert) the column holds. */
  readonly field: keyof SpanInsert
  readonly kind: SpanColumnKind
  /** Whether it may hold null (an origin field: whether its schema admits null). */
  readonly nullable?: boolean
  /** Whether full-text search reads its words (attributes, events): the COPY hands its bytes on. */
  readonly searchable?: true
}

// A span's own fields, as OTLP defines them: these do not change.
const spanCoreColumns = {
  project_id: { field: 'projectId', kind: 'text' },
  trace_id: { field: 'traceId', kind: 'text' },
  span_id: { field: 'spanId', kind: 'text' },
  parent_span_id: { field: 'parentSpanId', kind: 'text', nullable: true },
  name: { field: 'name', kind: 'text' },
  kind: { field: 'kind', kind: 'int16' },
  start_time: { field: 'startTimeUnixNano', kind: 'timestamp' },
  end_time: { field: 'endTimeUnixNano', kind: 'timestamp' },
  duration_ns: { field: 'durationNs', kind: 'int64Decimal' },
  trace_state: { field: 'traceState', kind: 'text', nullable: true },
  status_code: { field: 'statusCode', kind: 'int16' },
  status_message: { field: 'statusMessage', kind: 'text', nullable: true },
} as const satisfies Record<string, SpanColumn>

// The JSON columns, last: most of a row's bytes.
const spanJsonColumns = {
  attributes: { field: 'attributes', kind: 'jsonb', searchable: true },
  resource_attributes: { field: 'resourceAttributes', kind: 'sharedJsonb' },
  events: { field: 'events', kind: 'jsonb', searchable: true },
  links: { field: 'links', kind: 'jsonb' },
} as const satisfies Record<string, SpanColumn>

/** camelCase → snake_case, as a type: an origin field's column name. */
export type SnakeCase<Name extends string> = Name extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : Name

type OriginSchemas = typeof spanOriginFields
/** A schema's non-null member (`Nullable(X)` is `anyOf: [X, null]`). */
type NonNullMember<Schema> = Schema extends { anyOf: ReadonlyArray<infer Member> } ? Exclude<Member, { type: 'null' }> : Schema
/** How an origin field is stored, from its schema: integers are token counts, numbers USD amounts. */
export type OriginKind<Schema> = NonNullMember<Schema> extends { type: 'integer' } ? 'int64' : NonNullMember<Schema> extends { type: 'number' } ? 'numeric' : NonNullMember<Schema> extends { type: 'boolean' } ? 'bool' : 'text'
type SpanOriginColumns = { [Field in keyof OriginSchemas as SnakeCase<Field>]: { field: Field; kind: OriginKind<OriginSchemas[Field]>; nullable: boolean } }

const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

/** The runtime twin of OriginKind, and whether the schema admits null. */
function originColumn(field: string, schema: unknown): SpanColumn {
  const { anyOf } = schema as { anyOf?: Array<{ type?: unknown }> }
  const member = (anyOf?.find((option) => option.type !== 'null') ?? schema) as { type?: unknown }
  const kind = member.type === 'integer' ? 'int64' : member.type === 'number' ? 'numeric' : member.type === 'boolean' ? 'bool' : 'text'
  return { field: field as keyof SpanInsert, kind, nullable: anyOf?.some((option) => option.type === 'null') ?? false }
}

const spanOriginColumns = Object.fromEntries(
  Object.entries(spanOriginFields).map(([field, schema]) => [snakeCase(field), originColumn(field, schema)]),
) as unknown as SpanOriginColumns

/** Every column of `spans` a span is stored in (received_at is the database's), in the order both storage paths write them. */
export const spanColumns = { ...spanCoreColumns, ...spanOriginColumns, ...spanJsonColumns }
export type SpanColumns = typeof spanColumns
export type SpanColumnName = keyof SpanColumns

/** The description as a list, for the loops that write and read rows. */
export const spanColumnList: ReadonlyArray<SpanColumn & { name: SpanColumnName }> = Object.entries(spanColumns).map(([name, column]) => ({ name: name as SpanColumnName, ...(column as SpanColumn) }))

/** Each kind's Postgres type, as the statement path's recordset declares it. */
export const postgresTypeOf: Record<SpanColumnKind, string> = {
  text: 'text', int16: 'smallint', int64: 'bigint', int64Decimal: 'bigint', timestamp: 'timestamptz', numeric: 'numeric', bool: 'boolean', jsonb: 'jsonb', sharedJsonb: 'jsonb',
}

// Spans of one batch start and end within a few distinct seconds: formatting the date (half the
// cost of serialising a row) is done once per second seen, in a small cache that is reset when full.
const isoSeconds = new Map<string, string>()

/** Nanoseconds since the epoch (decimal string) → ISO 8601 with microseconds, without BigInt. */
export function nanosToIsoMicros(nanos: string): string {
  const padded = nanos.length >= 10 ? nanos : nanos.padStart(10, '0')
  const seconds = padded.slice(0, -9)
  let iso = isoSeconds.get(seconds)
  if (iso === undefined) {
    iso = new Date(Number(seconds) * 1000).toISOString().slice(0, 19)
    if (isoSeconds.size >= 256) isoSeconds.clear()
    isoSeconds.set(seconds, iso)
  }
  return `${iso}.${padded.slice(-9, -3)}Z`
}

export type SpanRow = Record<SpanColumnName, unknown>
