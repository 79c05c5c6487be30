import type { CommentObjectType } from '../database.ts'
import type { Executor } from './executor.ts'

/**
 * Whether the project holds what a comment is about. A span is not looked up (its id alone is not
 * indexed within a project: a comment on one is posted from its trace's page, which has it).
 */
export async function commentTargetExists(db: Executor, projectId: string, objectType: CommentObjectType, objectId: string): Promise<boolean> {
  switch (objectType) {
    case 'span':
      return true
    case 'trace':
      return (await db.selectFrom('spans').select('span_id').where('project_id', '=', projectId).where('trace_id', '=', objectId).limit(1).executeTakeFirst()) !== undefined
    case 'session':
      return (await db.selectFrom('session_summaries').select('session_id').where('project_id', '=', projectId).where('session_id', '=', objectId).limit(1).executeTakeFirst()) !== undefined
    case 'prompt':
      return (
        (await db
          .selectFrom('prompts')
          .innerJoin('promptsets', 'promptsets.id', 'prompts.promptset_id')
          .select('prompts.id')
          .where('promptsets.project_id', '=', projectId)
          .where('prompts.id', '=', objectId)
          .executeTakeFirst()) !== undefined
      )
    case 'dataset_item':
      return (
        (await db
          .selectFrom('dataset_items')
          .innerJoin('datasets', 'datasets.id', 'dataset_items.dataset_id')
          .select('dataset_items.id')
          .where('datasets.project_id', '=', projectId)
          .where('dataset_items.id', '=', objectId)
          .limit(1)
          .executeTakeFirst()) !== undefined
      )
  }
}
