export * from './span-batch.contract.ts'
export { defaultSpanBatchJobOptions, spanBatchJobName } from './job-options.ts'
export {
  createSpanBatchQueueConnection,
  describeQueueRedisTarget,
  isCluster,
  masterNodes,
  queueRedisTargetOf,
  spanBatchConnectionName,
  type QueueRedis,
  type QueueRedisTarget,
} from './redis-connection.ts'
export { shardIndexOf, shardSlot, spanBatchShards, type SpanBatchShard, type SpanBatchShardLayout } from './span-batch.shards.ts'
export { createBullMqSpanBatchProducer, type BullMqSpanBatchProducerOptions } from './bullmq.producer.ts'
export { createInProcessSpanBatchProducer, type InProcessSpanBatchProducerOptions } from './in-process.producer.ts'
export { releaseBody } from './body-memory.ts'
export { bucketStep, createMemorySpanRateLimiter, verdictOf, type SpanRateLimit, type SpanRateLimiter, type SpanRateVerdict } from './span-rate-limit.ts'
export { createRedisSpanRateLimiter, spanRateLimitKeyOf, type RedisSpanRateLimiterOptions } from './span-rate-limit.redis.ts'
export { orphanPayloadAgeMs, sweepOrphanPayloads } from './orphan-sweep.ts'
export { ProjectShares } from './project-shares.ts'
export { addJobTurns, addTurns, endTurn, isLightTurn, lightTurns, maxJobPriority, priorityOfTurn, projectTurnsKeyOf } from './project-turns.ts'
export { deletePayload, payloadTtlSeconds, readJobBodies, renewPayload, bodyBytesOf, spanCountOf, withJobBodies, type QueuedBody } from './span-batch.payload.ts'
export { pauseWriters, resumeWritersLeftPaused, type PausedWriters, type WriterQueue } from './writer-pause.ts'
export {
  createBullMqProjectJobQueue,
  projectJobQueuePrefix,
  type ProjectJob,
  type ProjectJobData,
  type ProjectJobProcessor,
  type ProjectJobQueue,
  type ProjectJobQueueOptions,
} from './project-job.queue.ts'
export { createInProcessProjectJobQueue } from './in-process-project-job.queue.ts'
export { repeatedErrorLog } from './repeated-error.log.ts'
export { Queue, UnrecoverableError, Worker, type Job, type JobsOptions } from './bullmq-classes.ts'
export { ShardWritability, type ShardWritabilityOptions, type UnwritableShard } from './shard-writability.ts'
export { probeShard, probeWaitMs } from './replica-wait.ts'
