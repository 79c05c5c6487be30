import { createRequire } from 'node:module'
import type * as BullMQ from 'bullmq'

// BullMQ's classes from their own modules rather than its index, which loads every class it has
// (flows, sandboxes, events, other Redis clients: ~70 modules more) into every service that
// queues, to sit in memory unused (docs/benchmarks.md#at-rest). bullmq has no `exports` map, so
// these paths are its published files; the index re-exports the same modules, so a class from
// here is the class a test or tool importing 'bullmq' sees. Types still come from 'bullmq'.
const requireBullmq = createRequire(import.meta.url)

export const { Queue } = requireBullmq('bullmq/dist/cjs/classes/queue.js') as Pick<typeof BullMQ, 'Queue'>
export const { Worker } = requireBullmq('bullmq/dist/cjs/classes/worker.js') as Pick<typeof BullMQ, 'Worker'>
export const { UnrecoverableError } = requireBullmq('bullmq/dist/cjs/classes/errors/unrecoverable-error.js') as Pick<typeof BullMQ, 'UnrecoverableError'>
export type Queue<DataTypeOrJob = unknown, ResultType = unknown, NameType extends string = string> = BullMQ.Queue<DataTypeOrJob, ResultType, NameType>
export type Worker<DataType = unknown, ResultType = unknown, NameType extends string = string> = BullMQ.Worker<DataType, ResultType, NameType>
export type UnrecoverableError = BullMQ.UnrecoverableError
export type { Job, JobsOptions } from 'bullmq'
