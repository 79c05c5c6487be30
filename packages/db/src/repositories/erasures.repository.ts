import { sql } from 'kysely'
import type { ErasureStatus } from '../database.ts'
import { inTransaction, type Executor } from './executor.ts'

// Erasure requests (GDPR art. 17): what the API records and reads back. The erasure's work, batch
// by batch, is in erasure-batch.repository.ts and @tracewell/write-path's erasure-batch.ts.

/** Whom an erasure is about: exactly one of a user, a session, or traces by id. */
export type ErasureSubject = { userId: string } | { sessionId: string } | { traceIds: string[] }

/** What an erasure deleted so far. */
export interface ErasureCounts {
  spans: number
  traces: number
  sessions: number
  scores: number
  judgments: number
  datasetItems: number
}

export interface ErasureDto {
  id: string
  projectId: string
  userId: string | null
  sessionId: string | null
  /** How many traces a request by trace ids named (0 for a user or a session). */
  traceCount: number
  status: ErasureStatus
  deleted: ErasureCounts
  requestedBy: string | null
  createdAt: string
  completedAt: string | null
}

interface ErasureRow {
  id: string
  project_id: string
  user_id: string | null
  session_id: string | null
  trace_count: number
  status: ErasureStatus
  deleted_spans: string
  deleted_traces: number
  deleted_sessions: number
  deleted_scores: number
  deleted_judgments: number
  deleted_dataset_items: number
  requested_by: string | null
  created_at: Date
  completed_at: Date | null
}

const toErasure = (row: ErasureRow): ErasureDto => ({
  id: row.id,
  projectId: row.project_id,
  userId: row.user_id,
  sessionId: row.session_id,
  traceCount: row.trace_count,
  status: row.status,
  deleted: {
    spans: Number(row.deleted_spans),
    traces: row.deleted_traces,
    sessions: row.deleted_sessions,
    scores: row.deleted_scores,
    judgments: row.deleted_judgments,
    datasetItems: row.deleted_dataset_items,
  },
  requestedBy: row.requested_by,
  createdAt: row.created_at.toISOString(),
  completedAt: row.completed_at?.toISOString() ?? null,
})

const columns = sql`id, project_id, user_id, session_id, trace_count, status, deleted_spans::text as deleted_spans, deleted_traces, deleted_sessions,
  deleted_scores, deleted_judgments, deleted_dataset_items, requested_by, created_at, completed_at`

/**
 * Records an erasure request (queued); a request by trace ids lists them as traces still to take.
 * `requestedBy` is the display prefix of the key that asked (the record of who did).
 */
export async function createErasure(db: Executor, projectId: string, subject: ErasureSubject, requestedBy: string | null): Promise<ErasureDto> {
  return inTransaction(db, async (trx) => {
    const traceIds = 'traceIds' in subject ? [...new Set(subject.traceIds)] : []
    const { rows } = await sql<ErasureRow>`
      insert into erasure_requests (project_id, user_id, session_id, trace_count, requested_by)
      values (${projectId}, ${'userId' in subject ? subject.userId : null}, ${'sessionId' in subject ? subject.sessionId : null}, ${traceIds.length}, ${requestedBy})
      returning ${columns}`.execute(trx)
    const row = rows[0]!
    if (traceIds.length > 0) {
      await sql`insert into erasure_traces (erasure_id, trace_id) select ${row.id}, unnest(${traceIds}::text[])`.execute(trx)
    }
    return toErasure(row)
  })
}

export async function findErasure(db: Executor, projectId: string, id: string): Promise<ErasureDto | undefined> {
  const { rows } = await sql<ErasureRow>`select ${columns} from erasure_requests where project_id = ${projectId} and id = ${id}`.execute(db)
  return rows[0] && toErasure(rows[0])
}

/** A project's erasures, newest first. */
export async function listErasures(db: Executor, projectId: string, limit: number): Promise<ErasureDto[]> {
  const { rows } = await sql<ErasureRow>`
    select ${columns} from erasure_requests where project_id = ${projectId} order by created_at desc, id desc limit ${limit}`.execute(db)
  return rows.map(toErasure)
}

/**
 * The oldest erasure with work to do now: queued, running, or rechecking once its re-check is
 * due. Erasures run one at a time, oldest first (each batch under the summariser's fold lock).
 */
export async function nextOpenErasure(db: Executor): Promise<ErasureDto | undefined> {
  const { rows } = await sql<ErasureRow>`
    select ${columns} from erasure_requests
    where status <> 'completed' and (status <> 'rechecking' or recheck_at <= now())
    order by created_at, id limit 1`.execute(db)
  return rows[0] && toErasure(rows[0])
}

/** How long until the earliest re-check falls due (ms), or null when none waits. */
export async function nextRecheckInMs(db: Executor): Promise<number | null> {
  const { rows } = await sql<{ ms: number | null }>`
    select (extract(epoch from min(recheck_at) - now()) * 1000)::integer as ms from erasure_requests where status = 'rechecking'`.execute(db)
  return rows[0]?.ms ?? null
}
