import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import type { Static } from '@sinclair/typebox'
import type { QueueBody, QueueItemSchema, QueueSchema, QueueWithPeopleSchema } from '@tracewell/api-schemas'

/** The list's queues have no progressByPerson; one queue (GET …/:queueId) has. */
export type AnnotationQueue = Static<typeof QueueSchema> & { progressByPerson?: Static<typeof QueueWithPeopleSchema>['progressByPerson'] }
export type QueueItem = Static<typeof QueueItemSchema>

export function useAnnotationQueues(projectId: string) {
  return useQuery({
    queryKey: ['annotation-queues', projectId],
    queryFn: () => apiGet<{ queues: AnnotationQueue[] }>(apiPath('/api/annotation-queues', { project_id: projectId })),
    select: (answer) => answer.queues,
  })
}

export function useAnnotationQueue(projectId: string, queueId: string) {
  return useQuery({
    queryKey: ['annotation-queue', projectId, queueId],
    queryFn: () => apiGet<AnnotationQueue>(apiPath(`/api/annotation-queues/${queueId}`, { project_id: projectId })),
  })
}

export function useCreateAnnotationQueue(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (queue: QueueBody) => apiRequest<AnnotationQueue>('POST', apiPath('/api/annotation-queues', { project_id: projectId }), queue),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['annotation-queues', projectId] }),
  })
}

/** Taking, skipping and completing items: each answers the item to show next (or null). */
export function useQueueWork(projectId: string, queueId: string) {
  const client = useQueryClient()
  const progressChanged = () => void client.invalidateQueries({ queryKey: ['annotation-queue', projectId, queueId] })
  const path = (suffix: string) => apiPath(`/api/annotation-queues/${queueId}${suffix}`, { project_id: projectId })
  const next = useMutation({ mutationFn: () => apiRequest<{ item: QueueItem | null }>('POST', path('/next')).then((answer) => answer.item), onSuccess: progressChanged })
  const skip = useMutation({ mutationFn: (itemId: string) => apiRequest<void>('POST', path(`/items/${itemId}/skip`)), onSuccess: progressChanged })
  const complete = useMutation({ mutationFn: (itemId: string) => apiRequest<QueueItem>('POST', path(`/items/${itemId}/complete`)), onSuccess: progressChanged })
  return { next, skip, complete }
}

/** A reviewer's score on a queue item (a trace or a session), one per score name and item. */
export function useScoreQueueItem(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: ({ item, name, value }: { item: QueueItem; name: string; value: number | boolean | string }) =>
      apiRequest<unknown>('POST', apiPath('/api/scores', { project_id: projectId }), {
        id: `review:${item.id}:${name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 120)}`,
        ...(item.objectType === 'session' ? { sessionId: item.objectId } : { traceId: item.objectId }),
        name,
        value,
        source: 'annotation',
      }),
    onSuccess: (_answer, { item }) => void client.invalidateQueries({ queryKey: ['trace', projectId, item.objectId] }),
  })
}
