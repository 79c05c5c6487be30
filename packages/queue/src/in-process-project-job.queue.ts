import type { ProjectJobQueue, ProjectJobQueueOptions } from './project-job.queue.ts'

interface WaitingJob {
  jobId: string
  attempt: number
  /** Order of arrival (a retry arrives anew), to take the oldest among equals. */
  seq: number
}

/**
 * The job queue for `npm start` without Redis: jobs wait in memory, `concurrency` at a time,
 * retried after a doubling backoff. Every time a slot frees it goes to the project with the
 * fewest jobs running (the oldest waiting job among equals): the turns of the BullMQ queue
 * (project-job.queue.ts), counted on what runs now rather than at the time each job was added.
 */
export function createInProcessProjectJobQueue(options: ProjectJobQueueOptions): ProjectJobQueue {
  const known = new Set<string>()
  const waiting = new Map<string, WaitingJob[]>()
  const runningByProject = new Map<string, number>()
  const timers = new Set<NodeJS.Timeout>()
  const isPermanent = options.isPermanent ?? (() => false)
  let running = 0
  let seq = 0
  let closed = false
  let idle: (() => void) | undefined

  const enqueue = (projectId: string, jobId: string, attempt: number) => {
    const jobs = waiting.get(projectId)
    const job = { jobId, attempt, seq: seq++ }
    if (jobs) jobs.push(job)
    else waiting.set(projectId, [job])
  }

  /** The project whose turn it is: fewest running, then oldest waiting job. */
  const nextProject = (): string | undefined => {
    let best: { projectId: string; running: number; seq: number } | undefined
    for (const [projectId, jobs] of waiting) {
      const candidate = { projectId, running: runningByProject.get(projectId) ?? 0, seq: (jobs[0] as WaitingJob).seq }
      if (best === undefined || candidate.running < best.running || (candidate.running === best.running && candidate.seq < best.seq)) best = candidate
    }
    return best?.projectId
  }

  const run = (projectId: string, job: WaitingJob) => {
    running++
    runningByProject.set(projectId, (runningByProject.get(projectId) ?? 0) + 1)
    const final = job.attempt >= options.maxAttempts
    options
      .process(job.jobId, final)
      .then(
        () => known.delete(job.jobId),
        (error: unknown) => {
          options.logger.warn({ jobId: job.jobId, projectId, attempt: job.attempt, final, err: error }, `${options.jobKind} failed`)
          if (final || isPermanent(error) || closed) return void known.delete(job.jobId)
          const timer = setTimeout(() => {
            timers.delete(timer)
            enqueue(projectId, job.jobId, job.attempt + 1)
            pump()
          }, options.backoffMs * 2 ** (job.attempt - 1))
          timers.add(timer)
        },
      )
      .finally(() => {
        running--
        const left = (runningByProject.get(projectId) ?? 1) - 1
        if (left === 0) runningByProject.delete(projectId)
        else runningByProject.set(projectId, left)
        if (running === 0) idle?.()
        pump()
      })
  }

  const pump = () => {
    while (!closed && running < options.concurrency) {
      const projectId = nextProject()
      if (projectId === undefined) return
      const jobs = waiting.get(projectId) as WaitingJob[]
      const job = jobs.shift() as WaitingJob
      if (jobs.length === 0) waiting.delete(projectId)
      run(projectId, job)
    }
  }

  return {
    async add(jobs) {
      for (const { jobId, projectId } of jobs) {
        if (known.has(jobId)) continue
        known.add(jobId)
        enqueue(projectId, jobId, 1)
      }
      pump()
    },
    async ping() {},
    async close() {
      closed = true
      for (const timer of timers) clearTimeout(timer)
      if (running > 0) await new Promise<void>((resolve) => (idle = resolve))
    },
  }
}
