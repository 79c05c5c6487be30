import type { SpanInsert } from '@tracewell/db'
import { JsonTextBytes } from '@tracewell/json-text'
import { keyField } from '@tracewell/otlp/key-field'
import { PROMPT_KEYS, TAG_KEYS } from '@tracewell/otlp/trace-label-keys'

// The prompts and tags a span gives its trace, which dashboards group by (issue 45: groupBy
// prompt, "promptset and version", and tag). Read where the writer folds a span into its trace's
// delta, so that the rollups count them with no span read again:
//
// - prompt: `<promptset>:<version>`, from Tracewell's own `tracewell.prompt.promptset_id` and
//   `tracewell.prompt.version` (playground and experiment runs) or Langfuse's
//   `langfuse.observation.prompt.name` and `.version`; a promptset without a version is not a prompt.
// - tags: Langfuse's `langfuse.trace.tags` and OpenInference's `tag.tags`, a list of strings (or one
//   string: a JSON array's text, as some SDKs flatten lists, or a single tag).
//
// The keys are named in @tracewell/otlp (trace-label-keys.ts): ingest queues attributes that name
// one of them parsed, and the others as a text, which therefore gives no label.

type AttributeMap = Exclude<SpanInsert['attributes'], JsonTextBytes>
type AnyValue = AttributeMap[string]

/** The prompt and tags a span gives its trace. */
export interface SpanLabels {
  prompt: string | null
  tags: readonly string[]
}

const NO_LABELS: SpanLabels = { prompt: null, tags: [] }

/**
 * The span's prompt and tags. Attributes still as queued text give none: ingest queues attributes
 * naming a label's key parsed (namesTraceLabels), so no text is searched for them.
 */
export function spanLabels(attributes: SpanInsert['attributes'] | undefined): SpanLabels {
  if (attributes === undefined || attributes instanceof JsonTextBytes) return NO_LABELS
  return { prompt: spanPrompt(attributes), tags: spanTags(attributes) }
}

function scalar(value: AnyValue | undefined): string | null {
  if (value === undefined) return null
  // A label, not a document, and a key of the rollups' index: cut as the span's model is.
  if ('stringValue' in value) return value.stringValue === '' ? null : keyField(value.stringValue)
  if ('intValue' in value) return value.intValue
  if ('doubleValue' in value) return String(value.doubleValue)
  return null
}

/** The span's prompt as `<promptset>:<version>`, or null. */
export function spanPrompt(attributes: AttributeMap | undefined): string | null {
  if (attributes === undefined) return null
  for (const [promptsetKey, versionKey] of PROMPT_KEYS) {
    const promptset = scalar(attributes[promptsetKey])
    const version = scalar(attributes[versionKey])
    if (promptset !== null && version !== null) return `${promptset}:${version}`
  }
  return null
}

/** The tags the span names, in the order given, without repeats. */
export function spanTags(attributes: AttributeMap | undefined): string[] {
  if (attributes === undefined) return []
  const tags: string[] = []
  const add = (tag: unknown) => {
    if (typeof tag !== 'string' || tag === '') return
    const label = keyField(tag)
    if (label !== null && !tags.includes(label)) tags.push(label)
  }
  for (const key of TAG_KEYS) {
    const value = attributes[key]
    if (value === undefined) continue
    if ('arrayValue' in value) for (const item of value.arrayValue.values ?? []) add(scalar(item))
    else if ('stringValue' in value) {
      const text = value.stringValue.trim()
      if (text.startsWith('[')) {
        try {
          const parsed: unknown = JSON.parse(text)
          if (Array.isArray(parsed)) for (const item of parsed) add(item)
        } catch {
          add(text)
        }
      } else add(text)
    }
  }
  return tags
}
