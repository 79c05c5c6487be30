import type { PromptDto, PromptsetDto } from '@tracewell/db'
import { compileTemplate, fillTemplate, type CompiledTemplate } from './prompt-template.ts'

/**
 * A registry with one selected prompt, ready to answer GET /api/promptset without serialising
 * anything per request: the response is `head + JSON(value) + tail`, where only the value
 * depends on the request's variables.
 */
export interface PromptView {
  readonly template: CompiledTemplate
  /** The whole response body with the value unfilled. */
  readonly unfilledJson: string
  readonly head: string
  readonly tail: string
}

export function toPromptView(registry: PromptsetDto, prompt: PromptDto): PromptView {
  // Field order follows SPEC §3; the fields are picked explicitly so that nothing else can leak in.
  const registryJson = JSON.stringify({
    id: registry.id,
    name: registry.name,
    description: registry.description,
    projectId: registry.projectId,
    createdAt: registry.createdAt,
    updatedAt: registry.updatedAt,
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
  const head = `${registryJson.slice(0, -1)},"prompts":[{"id":${JSON.stringify(prompt.id)},"value":`
  const tail = `,${promptRest.slice(1)}]}`
  return { template: compileTemplate(prompt.value, prompt.variables), unfilledJson: head + JSON.stringify(prompt.value) + tail, head, tail }
}

export function filledJson(view: PromptView, values: ReadonlyMap<string, string>): string {
  return view.head + JSON.stringify(fillTemplate(view.template, values)) + view.tail
}
