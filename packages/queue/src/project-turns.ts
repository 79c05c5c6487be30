import type { QueueRedis } from './redis-connection.ts'
import { QueueNames } from './span-batch.contract.ts'

// Fair draining within a shard, without BullMQ Pro's groups: every job holds one project's
// requests, and its turn is the number of that project's jobs in the shard not yet finished,
// itself included. A job on its project's first turn is added as usual, to the end of BullMQ's
// wait list; a later turn n is added with BullMQ priority n − 1. Writers take the whole wait list
// first (first in, first out), then the lowest priority number (first in, first out among
// equals): each project's first job, then each project's second, and so on, which is round robin
// over the projects, by job. A project that sends a trace now and then has at most one job in
// flight, always on the wait list, and is taken next however many jobs a flooding project has
// queued before it; the flooding one's n-th job waits behind the first n − 1 jobs of every other
// project, never behind their whole backlog. (Jobs of one project may be taken out of order: the
// store is order-free and idempotent.)
//
// The count is a Redis counter per project and shard, in the shard's hash slot (so cluster-safe):
// ingest adds the jobs of a write to it (INCRBY), and a writer subtracts one when a job completes
// or fails for good. A counter can drift (a command resent after a reconnect, a writer killed
// between completing a job and the decrement); drift changes only the order jobs are taken in,
// never whether they are stored, and a counter idle for `idleMs` expires, so it cannot last.

/** BullMQ's largest priority (2^21). */
export const maxJobPriority = 2_097_152

/** How long a project's counter outlives its last job added or finished. */
const idleMs = 10 * 60_000

export const projectTurnsKeyOf = (shardPrefix: string, projectId: string, queueName: string = QueueNames.spanBatches): string =>
  `${shardPrefix}:${queueName}:turns:${projectId}`

const ADD_TURNS = `
local counts = {}
for i, key in ipairs(KEYS) do
  counts[i] = redis.call('INCRBY', key, ARGV[i])
  redis.call('PEXPIRE', key, ARGV[#KEYS + 1])
end
return counts`

const END_TURN = `
local left = redis.call('DECR', KEYS[1])
if left <= 0 then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return left`

// A job queue's jobs have ids of their own (project-job.queue.ts): a job already in the queue is
// not counted again, so a scheduler that offers the same job twice leaves the counter as it is.
// KEYS are pairs (the job's BullMQ key, its project's counter); 0 answers "queued already".
const ADD_JOB_TURNS = `
local turns = {}
for i = 1, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    turns[#turns + 1] = 0
  else
    turns[#turns + 1] = redis.call('INCR', KEYS[i + 1])
    redis.call('PEXPIRE', KEYS[i + 1], ARGV[1])
  end
end
return turns`

interface TurnCommands {
  twAddTurns(...keysAndArgs: Array<string | number>): Promise<number[]>
  twAddJobTurns(...keysAndArgs: Array<string | number>): Promise<number[]>
  twEndTurn(key: string, idle: number): Promise<number>
}

const defined = new WeakSet<QueueRedis>()
function commands(redis: QueueRedis): TurnCommands {
  if (!defined.has(redis)) {
    // EVALSHA with a fallback to EVAL (ioredis defineCommand), on one server or routed by key on a cluster.
    redis.defineCommand('twAddTurns', { lua: ADD_TURNS })
    redis.defineCommand('twEndTurn', { numberOfKeys: 1, lua: END_TURN })
    redis.defineCommand('twAddJobTurns', { lua: ADD_JOB_TURNS })
    defined.add(redis)
  }
  return redis as unknown as TurnCommands
}

/**
 * Counts `jobs` new jobs per project of one shard (all its keys in one slot) and answers, per
 * project, the turns of its new jobs, in order.
 */
export async function addTurns(redis: QueueRedis, shardPrefix: string, jobs: ReadonlyMap<string, number>): Promise<Map<string, number[]>> {
  const projects = [...jobs.keys()]
  if (projects.length === 0) return new Map()
  const counts = await commands(redis).twAddTurns(projects.length, ...projects.map((id) => projectTurnsKeyOf(shardPrefix, id)), ...projects.map((id) => jobs.get(id) as number), idleMs)
  return new Map(
    projects.map((id, i) => {
      const added = jobs.get(id) as number
      const last = Number(counts[i])
      return [id, Array.from({ length: added }, (_, k) => Math.max(1, last - added + 1 + k))]
    }),
  )
}

/**
 * Counts the jobs of a job queue (one slot: `queuePrefix`) that are not in it yet, and answers
 * each job's turn in its project, in order: 0 for a job the queue holds already.
 */
export async function addJobTurns(redis: QueueRedis, queuePrefix: string, queueName: string, jobs: ReadonlyArray<{ jobId: string; projectId: string }>): Promise<number[]> {
  if (jobs.length === 0) return []
  const keys = jobs.flatMap(({ jobId, projectId }) => [`${queuePrefix}:${queueName}:${jobId}`, projectTurnsKeyOf(queuePrefix, projectId, queueName)])
  return (await commands(redis).twAddJobTurns(keys.length, ...keys, idleMs)).map(Number)
}

/** One job of the project finished (completed, or failed for good): its later jobs move up. */
export async function endTurn(redis: QueueRedis, shardPrefix: string, projectId: string, queueName: string = QueueNames.spanBatches): Promise<void> {
  await commands(redis).twEndTurn(projectTurnsKeyOf(shardPrefix, projectId, queueName), idleMs)
}

/**
 * Turns up to this are a light project's: one that sends now and then has a job or two in flight
 * (a few while the writers are slow), a flooding one hundreds. The writer stores their jobs in
 * COPYs of their own, beside the flood's (CopyCombiner's express lane).
 */
export const lightTurns = 4

/** Whether a job added with this BullMQ priority (undefined: none) is on one of its project's light turns. */
export const isLightTurn = (priority: number | undefined): boolean => priority === undefined || priority === 0 || priority + 1 <= lightTurns

/** The BullMQ priority of a job on its project's `turn`: none (the wait list) for the first. */
export const priorityOfTurn = (turn: number): number | undefined => (turn <= 1 ? undefined : Math.min(maxJobPriority, turn - 1))
