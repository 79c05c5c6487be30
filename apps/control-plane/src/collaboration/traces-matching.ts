import { searchTraces, traceFilterOf, type Executor, type TraceFilterParams } from '@tracewell/db'

/** At most this many traces go into a queue from one filter: a queue is worked by people. */
export const maxTracesFromFilter = 10_000

/** The ids of the traces matching a trace-list filter in a window, newest first, up to the bound. */
export async function traceIdsMatching(db: Executor, projectId: string, filter: TraceFilterParams, window: { from?: Date; to?: Date }): Promise<string[]> {
  const ids: string[] = []
  let cursor: Awaited<ReturnType<typeof searchTraces>>['next'] | undefined
  do {
    const page = await searchTraces(db, { ...traceFilterOf(projectId, filter), ...window, limit: 1_000, sort: 'time', order: 'desc', cursor: cursor ?? undefined })
    ids.push(...page.traces.map((trace) => trace.traceId))
    cursor = page.next
  } while (cursor !== null && ids.length < maxTracesFromFilter)
  return ids.slice(0, maxTracesFromFilter)
}
