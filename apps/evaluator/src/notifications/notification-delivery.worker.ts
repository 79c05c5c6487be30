import { claimDueDeliveries, findNotificationChannelsByIds, recordDeliveryAttempt, type AttemptRecord, type ClaimedDelivery, type Db } from '@tracewell/db'
import { retryAt, storedNotification, type ChannelSender, type SendOutcome } from '@tracewell/notifications'
import type { Logger } from '@tracewell/logger'

// The delivery worker (docs/operations.md#notifications): on every evaluator replica, each look
// turns new monitor events into deliveries (the outbox, once per (event, channel) by its unique
// key) and sends the due ones. A claim leases its rows past the send's timeout, so replicas never
// send one delivery at once, and a replica that dies mid-send leaves it to be tried again when the
// lease runs out. Sends run side by side, each bounded by NOTIFICATION_TIMEOUT_MS: a receiver that
// hangs holds its own slot that long and no other.

export interface DeliveryWorkerOptions {
  db: Db
  sender: ChannelSender
  /** NOTIFICATION_TIMEOUT_MS: one try at most; the claim's lease is longer. */
  timeoutMs: number
  retryBaseMs: number
  pollIntervalMs: number
  /** Turns new monitor events into deliveries; how many it made. */
  outbox: (db: Db) => Promise<number>
  logger: Logger
  /** Counts each try's outcome (delivered, retrying, failed). */
  count?: (outcome: 'delivered' | 'retrying' | 'failed') => void
}

/** Deliveries claimed per look; more wait for the next look, which comes at once when this one was full. */
const claimBatch = 16

export interface DeliveryWorker {
  /** One look, now (what the timer runs; tests call it to not wait). */
  look(): Promise<void>
  close(): Promise<void>
}

function nextStep(outcome: SendOutcome, delivery: ClaimedDelivery, retryBaseMs: number): AttemptRecord['next'] {
  if (outcome.ok) return { status: 'delivered' }
  if (!outcome.retryable) return { status: 'failed' }
  const at = retryAt(delivery.attempt, delivery.createdAt, retryBaseMs)
  return at === null ? { status: 'failed' } : { status: 'pending', at }
}

export function startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { db, logger } = options
  // Long enough for a send that takes its whole timeout and the write of its outcome.
  const leaseMs = options.timeoutMs * 2 + 10_000
  let timer: NodeJS.Timeout | undefined
  let current: Promise<boolean> = Promise.resolve(false)
  let closed = false

  async function deliver(delivery: ClaimedDelivery, channels: Awaited<ReturnType<typeof findNotificationChannelsByIds>>): Promise<void> {
    const channel = channels.get(delivery.channelId)
    const outcome: SendOutcome =
      channel === undefined
        ? { ok: false, status: null, error: 'the channel was deleted', retryable: false, durationMs: 0 }
        : await options.sender.send(channel, storedNotification(delivery.payload), delivery.id)
    const next = nextStep(outcome, delivery, options.retryBaseMs)
    await recordDeliveryAttempt(db, delivery.id, { ok: outcome.ok, httpStatus: outcome.status, error: outcome.error, durationMs: outcome.durationMs, next })
    const fields = { deliveryId: delivery.id, channelId: delivery.channelId, attempt: delivery.attempt, status: outcome.status, durationMs: outcome.durationMs }
    if (next.status === 'delivered') logger.info(fields, 'notification delivered')
    else if (next.status === 'pending') logger.warn({ ...fields, error: outcome.error, nextAttemptAt: next.at.toISOString() }, 'notification not delivered; will retry')
    else logger.warn({ ...fields, error: outcome.error }, 'notification not delivered; given up')
    options.count?.(next.status === 'pending' ? 'retrying' : next.status)
  }

  /** Whether the claim was full (more may be due). */
  async function lookOnce(): Promise<boolean> {
    const made = await options.outbox(db)
    if (made > 0) logger.info({ deliveries: made }, 'monitor events queued for delivery')
    const claimed = await claimDueDeliveries(db, claimBatch, leaseMs)
    if (claimed.length === 0) return false
    const channels = await findNotificationChannelsByIds(
      db,
      claimed.map((delivery) => delivery.channelId),
    )
    const results = await Promise.allSettled(claimed.map((delivery) => deliver(delivery, channels)))
    for (const result of results) if (result.status === 'rejected') logger.error({ err: result.reason }, 'recording a notification try failed')
    return claimed.length === claimBatch
  }

  const look = () => {
    const run = current.then(lookOnce).catch((error: unknown) => {
      logger.error({ err: error }, 'delivering notifications failed')
      return false
    })
    current = run
    return run.then(() => undefined)
  }
  const schedule = (soon: boolean) => {
    if (closed) return
    timer = setTimeout(
      () =>
        void look()
          .then(() => current)
          .then(schedule),
      soon ? 0 : options.pollIntervalMs,
    )
  }
  schedule(false)
  return {
    look,
    async close() {
      closed = true
      clearTimeout(timer)
      await current
    },
  }
}
