/**
 * A row the evaluator's queues run (a pending judgment or experiment result): its id, the queue
 * job's too, and its project, by which the queue takes turns between projects.
 */
export interface QueuedRow {
  jobId: string
  projectId: string
}
