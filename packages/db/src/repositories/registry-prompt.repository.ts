import type { Executor } from './executor.ts'
import { findLabelledPrompt, type PromptDto } from './prompts.repository.ts'

/**
 * The version a label points at in the project's prompt registry of this name (the oldest
 * registry, should two share a name): what an evaluator's judge prompt is when it names one.
 */
export async function findRegistryPrompt(db: Executor, projectId: string, registryName: string, label: string): Promise<PromptDto | undefined> {
  const registry = await db
    .selectFrom('promptsets')
    .select('id')
    .where('project_id', '=', projectId)
    .where('name', '=', registryName)
    .orderBy('created_at')
    .orderBy('id')
    .executeTakeFirst()
  return registry === undefined ? undefined : findLabelledPrompt(db, registry.id, label)
}
