import type { AttributeSource } from './llm-attribute-map.ts'
import { llmAttributeMap, type LlmColumn } from './llm-attribute-map.ts'
import type { Attributes } from './attribute-values.ts'

/** The columns derived from a span's attributes (see llm-attribute-map.ts). */
export interface LlmFields {
  llmVendor: string | null
  /** The requested model; the response's model when no request model is reported. */
  llmModel: string | null
  llmResponseModel: string | null
  /** The operation, in the OTel GenAI vocabulary where known (operation-names.ts). */
  llmRequestType: string | null
  inputTokens: number | null
  outputTokens: number | null
  /** As reported, else input + output when both are known. */
  totalTokens: number | null
  /** Input tokens read from the provider's prompt cache. */
  cachedInputTokens: number | null
  /** Input tokens written to the provider's prompt cache. */
  cacheWriteInputTokens: number | null
  reasoningTokens: number | null
  sessionId: string | null
  userId: string | null
}

/** The cost the caller reported on the span, in USD; all null when it reported none. */
export interface CallerCost {
  inputCostUsd: number | null
  outputCostUsd: number | null
  totalCostUsd: number | null
}

const columns = Object.keys(llmAttributeMap) as LlmColumn[]

interface IndexEntry {
  column: number
  rank: number
  read: AttributeSource<unknown>['read']
}

// Attribute name → the columns it can fill and its rank there. A span is read in one pass over
// its own attributes (usually a dozen or two) instead of probing every name of the table (about
// ninety): this runs for every span, in ingest and in the writer.
const index = new Map<string, IndexEntry[]>()
columns.forEach((column, columnIndex) => {
  llmAttributeMap[column].forEach((source: AttributeSource<unknown>, rank: number) => {
    const entries = index.get(source.key) ?? []
    entries.push({ column: columnIndex, rank, read: source.read })
    index.set(source.key, entries)
  })
})

const NOT_FOUND = Number.MAX_SAFE_INTEGER

const column = Object.fromEntries(columns.map((name, i) => [name, i])) as Record<LlmColumn, number>

/** The value of every column of the table, by column index (null where no attribute gave one). */
function readColumns(attributes: Attributes): unknown[] {
  const values: unknown[] = new Array(columns.length).fill(null)
  let ranks: number[] | undefined
  for (const key in attributes) {
    const entries = index.get(key)
    if (entries === undefined) continue
    const value = attributes[key]
    if (value === undefined || value === null || typeof value !== 'object') continue
    ranks ??= new Array(columns.length).fill(NOT_FOUND)
    for (const entry of entries) {
      if (entry.rank >= (ranks[entry.column] as number)) continue
      const read = entry.read(value)
      if (read === null) continue
      values[entry.column] = read
      ranks[entry.column] = entry.rank
    }
  }
  return values
}

/** The derived LLM columns and the caller's cost of one span, from its attributes. */
export function deriveLlmUsage(attributes: Attributes): { fields: LlmFields; callerCost: CallerCost } {
  const values = readColumns(attributes)
  const read = <T>(name: LlmColumn) => values[column[name]] as T | null
  const input = read<number>('inputTokens')
  const output = read<number>('outputTokens')
  const requestModel = read<string>('requestModel')
  const responseModel = read<string>('responseModel')
  const fields: LlmFields = {
    llmVendor: read<string>('vendor'),
    llmModel: requestModel ?? responseModel,
    llmResponseModel: responseModel,
    llmRequestType: read<string>('operation'),
    inputTokens: input,
    outputTokens: output,
    totalTokens: read<number>('totalTokens') ?? (input !== null && output !== null ? input + output : null),
    cachedInputTokens: read<number>('cachedInputTokens'),
    cacheWriteInputTokens: read<number>('cacheWriteInputTokens'),
    reasoningTokens: read<number>('reasoningTokens'),
    sessionId: read<string>('sessionId'),
    userId: read<string>('userId'),
  }
  const inputCost = read<number>('inputCostUsd')
  const outputCost = read<number>('outputCostUsd')
  const callerCost: CallerCost = {
    inputCostUsd: inputCost,
    outputCostUsd: outputCost,
    totalCostUsd: read<number>('totalCostUsd') ?? (inputCost !== null && outputCost !== null ? inputCost + outputCost : null),
  }
  return { fields, callerCost }
}
