import type { Db, SpanInsert } from '@tracewell/db'
import { storeSpans, summariseAll } from '../../src/index.ts'
import { insertSpans } from '../../src/span-store.ts'

/** Stores spans, then folds them into the summaries: what a writer and its summariser do, at once. */
export async function storeAndSummarise(db: Db, spans: readonly SpanInsert[]): Promise<number> {
  const { inserted } = await storeSpans(db, spans)
  await summariseAll(db)
  return inserted
}

/** Stores spans at hand by the statement path alone (what a redelivered batch goes by); answers the spans inserted. */
export async function storeByStatement(db: Db, spans: readonly SpanInsert[]): Promise<number> {
  const byProject = Map.groupBy(spans, (span) => span.projectId)
  const sources = [...byProject].map(([projectId, projectSpans]) => ({ projectId, spans: () => projectSpans }))
  return (await insertSpans(db, sources)).inserted
}
