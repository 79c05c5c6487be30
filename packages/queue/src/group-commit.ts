import type { SpanRecord } from '@tracewell/otlp'
import type { SpanBatchJob } from './span-batch.contract.ts'

interface PendingRequest {
  projectId: string
  spans: SpanRecord[]
  resolve(): void
  reject(error: unknown): void
}

/**
 * Packs requests into jobs of at most `maxSpansPerJob` spans, grouped by project inside each job.
 * A request larger than one job is split across consecutive jobs; the caller is answered only
 * once all of them are written, because they all travel in the same write.
 */
export function packJobs(requests: ReadonlyArray<{ projectId: string; spans: readonly SpanRecord[] }>, maxSpansPerJob: number): SpanBatchJob[] {
  const jobs: SpanBatchJob[] = []
  let current = new Map<string, SpanRecord[]>()
  let room = maxSpansPerJob
  const finishJob = () => {
    if (current.size > 0) jobs.push({ version: 1, batches: [...current].map(([projectId, spans]) => ({ projectId, spans })) })
    current = new Map()
    room = maxSpansPerJob
  }
  for (const request of requests) {
    let offset = 0
    while (offset < request.spans.length) {
      if (room === 0) finishJob()
      const take = Math.min(room, request.spans.length - offset)
      let spans = current.get(request.projectId)
      if (!spans) current.set(request.projectId, (spans = []))
      for (let i = offset; i < offset + take; i++) spans.push(request.spans[i] as SpanRecord)
      offset += take
      room -= take
    }
  }
  finishJob()
  return jobs
}

/**
 * Group commit: requests that arrive while a write is in flight (or in the same tick) are written
 * together in the next write, so many small requests cost one round trip instead of one each.
 * Every caller's promise settles with the write that carried its spans: resolved once it is
 * acknowledged, rejected (all of them) if it fails.
 */
export class GroupCommit {
  #pending: PendingRequest[] = []
  #pendingSpans = 0
  #inFlightSpans = 0
  #flushing: Promise<void> | null = null
  readonly #maxSpansPerJob: number
  readonly #maxSpansPerWrite: number
  readonly #write: (jobs: SpanBatchJob[]) => Promise<void>

  constructor(options: { maxSpansPerJob: number; maxJobsPerWrite?: number; write: (jobs: SpanBatchJob[]) => Promise<void> }) {
    this.#maxSpansPerJob = options.maxSpansPerJob
    // Bounds one write's size (and so its latency); a request is never split across writes.
    this.#maxSpansPerWrite = options.maxSpansPerJob * (options.maxJobsPerWrite ?? 16)
    this.#write = options.write
  }

  /** Spans accepted but not yet acknowledged by the store (waiting plus in the current write). */
  get unacknowledgedSpans(): number {
    return this.#pendingSpans + this.#inFlightSpans
  }

  submit(projectId: string, spans: SpanRecord[]): Promise<void> {
    if (spans.length === 0) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ projectId, spans, resolve, reject })
      this.#pendingSpans += spans.length
      // setImmediate, not a microtask: requests parsed in the same turn of the event loop join.
      this.#flushing ??= new Promise<void>((done) => setImmediate(done)).then(() => this.#drain())
    })
  }

  /** Resolves once everything submitted so far has been written (or rejected). */
  async flushed(): Promise<void> {
    while (this.#flushing) await this.#flushing
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        let take = 0
        let spans = 0
        while (take < this.#pending.length && (take === 0 || spans < this.#maxSpansPerWrite)) {
          const next = this.#pending[take] as PendingRequest
          if (take > 0 && spans + next.spans.length > this.#maxSpansPerWrite) break
          spans += next.spans.length
          take++
        }
        const requests = this.#pending.splice(0, take)
        this.#inFlightSpans = spans
        this.#pendingSpans -= spans
        try {
          await this.#write(packJobs(requests, this.#maxSpansPerJob))
          for (const request of requests) request.resolve()
        } catch (error) {
          for (const request of requests) request.reject(error)
        } finally {
          this.#inFlightSpans = 0
        }
      }
    } finally {
      this.#flushing = null
    }
  }
}
