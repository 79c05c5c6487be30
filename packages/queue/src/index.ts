export * from './span-batch.contract.ts'
export { defaultSpanBatchJobOptions, spanBatchJobName } from './job-options.ts'
export { createSpanBatchQueueConnection } from './redis-connection.ts'
export { createBullMqSpanBatchProducer, type BullMqSpanBatchProducerOptions, type ProducerLogger } from './bullmq.producer.ts'
export { createInProcessSpanBatchProducer, type InProcessSpanBatchProducerOptions } from './in-process.producer.ts'
export { releaseBody } from './body-memory.ts'
export { orphanPayloadAgeMs, sweepOrphanPayloads } from './orphan-sweep.ts'
export { spansOfBatch } from './inline-spans.ts'
export {
  deletePayload,
  payloadTtlSeconds,
  renewPayload,
  spanCountOf,
  spansOfJob,
  withQueuedSpans,
  type QueuedSpans,
} from './span-batch.payload.ts'
