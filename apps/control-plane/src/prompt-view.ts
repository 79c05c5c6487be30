import type { PromptDto, PromptsetDto } from '@tracewell/db'
import { needsJsonEscape } from '@tracewell/json-text'
import { compileTemplate, type CompiledTemplate } from '@tracewell/llm-messages'

/** The query parameters that fill a prompt's variables: `variables.<name>=<value>`. */
const variablePrefix = 'variables.'

/**
 * A promptset with one selected prompt, ready to answer GET /api/promptset without serialising
 * anything per request: the response is `valueHead + value as JSON text + valueTail`, where only
 * the value depends on the request's variables. Everything that does not depend on the request
 * (the query keys to read, the JSON-escaped text around the placeholders) is worked out here once
 * per cached lookup, because a cached request is otherwise little more than this.
 */
export interface PromptView {
  readonly template: CompiledTemplate
  /** The whole response body with the value unfilled. */
  readonly unfilledJson: string
  /** The body up to the opening quote of the prompt's value, and from its closing quote on. */
  readonly valueHead: string
  readonly valueTail: string
  /** The query parameter of each declared variable, in declared order. */
  readonly queryKeys: readonly string[]
  /** `template.literals`, JSON-escaped, without quotes. */
  readonly jsonLiterals: readonly string[]
  /** For each of `template.slots`, the index of its variable in `template.variables`. */
  readonly slotVariables: readonly number[]
}

/**
 * A string's JSON text without the quotes. needsJsonEscape is checked first: JSON.stringify of
 * even a short string costs more than the rest of a fill, and most values need no escaping
 * (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
 */
const jsonEscaped = (text: string): string => (needsJsonEscape(text) ? JSON.stringify(text).slice(1, -1) : text)

export function toPromptView(promptset: PromptsetDto, prompt: PromptDto): PromptView {
  // Field order follows docs/api.md#get-a-prompt; the fields are picked explicitly so that nothing else can leak in.
  const promptsetJson = JSON.stringify({
    id: promptset.id,
    name: promptset.name,
    description: promptset.description,
    projectId: promptset.projectId,
    createdAt: promptset.createdAt,
    updatedAt: promptset.updatedAt,
  })
  const promptRest = JSON.stringify({
    variables: prompt.variables,
    model: prompt.model,
    modelSettings: prompt.modelSettings,
    version: prompt.version,
    live: prompt.live,
    tags: prompt.tags,
    spanId: prompt.spanId,
    note: prompt.note,
    promptsetId: prompt.promptsetId,
    createdAt: prompt.createdAt,
    updatedAt: prompt.updatedAt,
  })
  const valueHead = `${promptsetJson.slice(0, -1)},"prompts":[{"id":${JSON.stringify(prompt.id)},"value":"`
  const valueTail = `",${promptRest.slice(1)}]}`
  const template = compileTemplate(prompt.value, prompt.variables)
  return {
    template,
    unfilledJson: valueHead + jsonEscaped(prompt.value) + valueTail,
    valueHead,
    valueTail,
    queryKeys: template.variables.map((name) => variablePrefix + name),
    jsonLiterals: template.literals.map(jsonEscaped),
    slotVariables: template.slots.map((name) => template.variables.indexOf(name)),
  }
}

/**
 * The declared variables' values in declared order ('' for an absent one), read by their
 * precomputed keys rather than by scanning the query; undefined when the query has no
 * `variables.*` parameter at all, in which case the prompt comes back unfilled.
 */
export function declaredValues(view: PromptView, query: Readonly<Record<string, unknown>>): string[] | undefined {
  const values: string[] = []
  let anyGiven = false
  for (let index = 0; index < view.queryKeys.length; index++) {
    const value = query[view.queryKeys[index] as string]
    if (typeof value === 'string') {
      anyGiven = true
      values.push(value)
    } else {
      values.push('')
    }
  }
  // None of the declared ones: only a scan tells whether undeclared ones were given.
  if (!anyGiven && !Object.keys(query).some((key) => key.startsWith(variablePrefix))) return undefined
  return values
}

/** The declared variables whose value is absent or empty, in declared order. */
export function missingValues(view: PromptView, values: readonly string[]): string[] {
  return view.template.variables.filter((_name, index) => values[index] === '')
}

/** The response body with every placeholder filled; `values` as from `declaredValues`, none missing. */
export function filledJson(view: PromptView, values: readonly string[]): string {
  const { jsonLiterals, slotVariables } = view
  let json = view.valueHead + (jsonLiterals[0] as string)
  for (let slot = 0; slot < slotVariables.length; slot++) {
    json += jsonEscaped(values[slotVariables[slot] as number] as string) + (jsonLiterals[slot + 1] as string)
  }
  return json + view.valueTail
}
