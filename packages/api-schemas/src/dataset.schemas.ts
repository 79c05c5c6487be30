import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema } from './common.schemas.ts'

// The shapes of the dataset routes (docs/api.md#datasets).

export const datasetItemIdPattern = '^[A-Za-z0-9_.:-]{1,200}$'

export const DatasetItemIdSchema = Type.String({ pattern: datasetItemIdPattern, description: '1–200 of A-Z a-z 0-9 _ . : -' })

/** JSON of any kind, null excepted where a value is required. */
const JsonValueSchema = (description: string) => Type.Unknown({ description })

export const DatasetItemBodySchema = Type.Object(
  {
    id: Type.Optional({ ...DatasetItemIdSchema, description: 'your id for the item: an item of this id in the dataset is replaced (default: a new UUID)' }),
    input: Type.Optional(JsonValueSchema('any JSON but null; taken from the source trace or span’s LLM messages when omitted')),
    expectedOutput: Type.Optional(JsonValueSchema('any JSON; taken from the source’s answer when omitted and a source is given')),
    metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
    sourceTraceId: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'the trace the item comes from, 32 hex characters' })),
    sourceSpanId: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{16}$', description: 'the span of that trace it comes from, 16 hex characters (needs sourceTraceId)' })),
  },
  { additionalProperties: false },
)
export type DatasetItemBody = Static<typeof DatasetItemBodySchema>

export const maxItemsPerRequest = 10_000

export const DatasetItemsBodySchema = Type.Union(
  [
    DatasetItemBodySchema,
    Type.Object({ items: Type.Array(DatasetItemBodySchema, { minItems: 1, maxItems: maxItemsPerRequest }) }, { additionalProperties: false }),
    Type.Array(DatasetItemBodySchema, { minItems: 1, maxItems: maxItemsPerRequest, description: 'JSONL (application/x-ndjson, application/jsonl): one item per line' }),
  ],
  { description: 'one item, {items: [...]}, or a JSONL upload (one item per line)' },
)

export const DatasetItemSchema = Type.Object({
  id: Type.String(),
  datasetId: Type.String(),
  input: Type.Unknown(),
  expectedOutput: Type.Unknown({ description: 'null when none' }),
  metadata: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  sourceTraceId: Type.Union([Type.String(), Type.Null()]),
  sourceSpanId: Type.Union([Type.String(), Type.Null()]),
  validFrom: Type.Integer({ description: 'the dataset version that added this form of the item' }),
  validTo: Type.Union([Type.Integer(), Type.Null()], { description: 'the version that replaced or deleted it; null while current' }),
  createdAt: IsoDateSchema,
})

export const DatasetSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  name: Type.String(),
  description: Type.String(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  version: Type.Integer({ description: 'the current version: 0 until items are added, then one more per change to the items' }),
  itemCount: Type.Integer({ description: 'items in the current version' }),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
})

export const DatasetWithItemsSchema = Type.Composite([
  DatasetSchema,
  Type.Object({
    itemsVersion: Type.Integer({ description: 'the version the items are of (the current one unless ?version= asked for another)' }),
    itemsTotal: Type.Integer({ description: 'items in that version; `items` holds those from offset, at most limit' }),
    items: Type.Array(DatasetItemSchema, { description: 'in the order they were added' }),
  }),
])

export const CreateDatasetBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
)

export const AddedItemsSchema = Type.Object({
  version: Type.Integer({ description: 'the dataset’s new version' }),
  items: Type.Array(DatasetItemSchema),
})
