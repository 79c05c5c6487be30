import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import type { Static } from '@sinclair/typebox'
import type { CommentSchema } from '@tracewell/api-schemas'

export type Comment = Static<typeof CommentSchema>
export type CommentObjectType = Comment['objectType']

export interface CommentTarget {
  projectId: string
  objectType: CommentObjectType
  objectId: string
}

const commentsKey = (target: CommentTarget) => ['comments', target.projectId, target.objectType, target.objectId]

export function useComments(target: CommentTarget) {
  return useQuery({
    queryKey: commentsKey(target),
    queryFn: () => apiGet<{ comments: Comment[] }>(apiPath('/api/comments', { project_id: target.projectId, objectType: target.objectType, objectId: target.objectId })),
    select: (answer) => answer.comments,
  })
}

/** Every change to a thread reads the comments again, and the trace list's counts. */
function useCommentsChanged(target: CommentTarget) {
  const client = useQueryClient()
  return () => {
    void client.invalidateQueries({ queryKey: commentsKey(target) })
    void client.invalidateQueries({ queryKey: ['traces', target.projectId] })
  }
}

export function useAddComment(target: CommentTarget) {
  return useMutation({
    mutationFn: (comment: { body: string; threadId?: string }) =>
      apiRequest<Comment>('POST', apiPath('/api/comments', { project_id: target.projectId }), { objectType: target.objectType, objectId: target.objectId, ...comment }),
    onSuccess: useCommentsChanged(target),
  })
}

export function useChangeComment(target: CommentTarget) {
  return useMutation({
    mutationFn: ({ id, ...change }: { id: string; body?: string; resolved?: boolean }) => apiRequest<Comment>('PATCH', apiPath(`/api/comments/${id}`, { project_id: target.projectId }), change),
    onSuccess: useCommentsChanged(target),
  })
}

export function useDeleteComment(target: CommentTarget) {
  return useMutation({
    mutationFn: (id: string) => apiRequest<void>('DELETE', apiPath(`/api/comments/${id}`, { project_id: target.projectId })),
    onSuccess: useCommentsChanged(target),
  })
}
