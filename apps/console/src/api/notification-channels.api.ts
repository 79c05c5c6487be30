import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { apiGet, apiPath, apiRequest } from './client.ts'
import type { Static } from '@sinclair/typebox'
import type { ChannelTestResultSchema, DeliveryAttemptSchema, NotificationChannelSchema, NotificationDeliverySchema, SavedNotificationChannelSchema } from '@tracewell/api-schemas'

// Where a project's monitors send their notifications (docs/api.md#notification-channels), and
// the log of every delivery and its tries.

export type NotificationChannel = Static<typeof NotificationChannelSchema>
export type ChannelType = NotificationChannel['type']

/** The answer to a new webhook channel: its signing secret, this once. */
export type CreatedChannel = Static<typeof SavedNotificationChannelSchema>

export type Delivery = Static<typeof NotificationDeliverySchema>
export type DeliveryAttempt = Static<typeof DeliveryAttemptSchema>

/** What the receiver made of a test message (its try is in the delivery log too). */
export type ChannelTestResult = Static<typeof ChannelTestResultSchema>

export interface NewChannel {
  name: string
  type: ChannelType
  url?: string
  address?: string
  secret?: string
}

const channelPath = (channelId: string, rest = '') => `/api/notification-channels/${encodeURIComponent(channelId)}${rest}`

export function useChannels(projectId: string) {
  return useQuery({
    queryKey: ['notification-channels', projectId],
    queryFn: () => apiGet<{ notificationChannels: NotificationChannel[] }>(apiPath('/api/notification-channels', { project_id: projectId })),
    select: (answer) => answer.notificationChannels,
  })
}

export function useCreateChannel(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (body: NewChannel) => apiRequest<CreatedChannel>('POST', apiPath('/api/notification-channels', { project_id: projectId }), body),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['notification-channels', projectId] }),
  })
}

export function useDeleteChannel(projectId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (channelId: string) => apiRequest<void>('DELETE', apiPath(channelPath(channelId), { project_id: projectId })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['notification-channels', projectId] }),
  })
}

/** Sends a test message through the channel; its delivery joins the log. */
export function useTestChannel(projectId: string, channelId: string) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: () => apiRequest<ChannelTestResult>('POST', apiPath(channelPath(channelId, '/test'), { project_id: projectId })),
    onSettled: () => void client.invalidateQueries({ queryKey: ['notification-deliveries', projectId, channelId] }),
  })
}

/** The channel's deliveries, newest first; read again every 3 s while one is still being tried. */
export function useDeliveries(projectId: string, channelId: string, enabled: boolean) {
  return useQuery({
    queryKey: ['notification-deliveries', projectId, channelId],
    queryFn: () => apiGet<{ deliveries: Delivery[] }>(apiPath(channelPath(channelId, '/deliveries'), { project_id: projectId })),
    select: (answer) => answer.deliveries,
    enabled,
    refetchInterval: (query) => (query.state.data?.deliveries.some((delivery) => delivery.status === 'pending') ? 3_000 : 15_000),
  })
}
