import type { AttributeMap } from './span-record.ts'

// The attributes a trace's prompts and tags are read from, which the writer reads where it folds a
// span into its trace's delta (@tracewell/write-path trace-labels.ts). Named here, where ingest
// queues the records: a span's attributes are queued as a text the writer stores unparsed, except
// when they name one of these keys (span-records.codec.ts), so that the writer never searches a
// text for them.

/** Tracewell's own (playground and experiment runs) and Langfuse's prompt: a promptset and its version. */
export const PROMPT_KEYS: ReadonlyArray<readonly [promptset: string, version: string]> = [
  ['tracewell.prompt.promptset_id', 'tracewell.prompt.version'],
  ['langfuse.observation.prompt.name', 'langfuse.observation.prompt.version'],
]

/** Langfuse's and OpenInference's tags. */
export const TAG_KEYS: readonly string[] = ['langfuse.trace.tags', 'tag.tags']

/** Whether the attributes may give their trace a prompt or tags (a prompt needs its promptset's key). */
export function namesTraceLabels(attributes: AttributeMap): boolean {
  for (const [promptset] of PROMPT_KEYS) if (attributes[promptset] !== undefined) return true
  for (const key of TAG_KEYS) if (attributes[key] !== undefined) return true
  return false
}
