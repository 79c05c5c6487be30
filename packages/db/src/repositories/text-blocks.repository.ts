import { sql } from 'kysely'
import { BlockFilter, blockFilterBits, textBlockOf, TextFilterWords } from '@tracewell/text-filter'
import type { Executor } from './executor.ts'

// The word filters of blocks of time (trace_text_blocks; @tracewell/text-filter's block-filter.ts):
// full-text search reads a project's blocks first and then only the traces of the blocks that may
// hold every word. The summariser adds each trace's words to the block of the trace's start, in
// its fold (one fold at a time, so a block is read, merged and written back without a race); the
// migration that made the table added those of the traces stored before.

/** Words to add to the block of `projectId` that starts at `blockMs` (ms since the epoch). */
export interface TextBlockWords {
  projectId: string
  blockMs: number
  words: TextFilterWords
}

/** The words of traces gathered by the block of each one's start (ms since the epoch), for addWordsToTextBlocks. */
export function wordsByBlock(traces: Iterable<{ projectId: string; startMs: number; words: TextFilterWords }>): TextBlockWords[] {
  const blocks = new Map<string, TextBlockWords>()
  for (const { projectId, startMs, words } of traces) {
    if (words.size === 0) continue
    const blockMs = textBlockOf(startMs)
    const key = `${projectId}\u0000${blockMs}`
    let block = blocks.get(key)
    if (block === undefined) blocks.set(key, (block = { projectId, blockMs, words: new TextFilterWords() }))
    block.words.addHashes(words.hashes())
  }
  return [...blocks.values()]
}

/**
 * Adds words to their blocks, making a block that does not exist yet (sized from the words the
 * project's previous block was given, since a filter cannot grow once made). Every block looked up
 * by its primary key, in the one day partition its key names, whatever the statistics say.
 */
export async function addWordsToTextBlocks(db: Executor, additions: readonly TextBlockWords[]): Promise<void> {
  if (additions.length === 0) return
  const blocks = additions.map((addition) => new Date(addition.blockMs).toISOString())
  const { rows } = await sql<{ i: string; words: number | null; filter: string | null; previous_words: number | null }>`
    select k.i, b.words, b.filter, p.words as previous_words
    from unnest(${additions.map((addition) => addition.projectId)}::text[], ${blocks}::timestamptz[]) with ordinality as k(project_id, block, i)
    left join lateral (
      select words, filter::text as filter from trace_text_blocks b where b.project_id = k.project_id and b.block = k.block offset 0
    ) as b on true
    left join lateral (
      select words from trace_text_blocks b
      where b.project_id = k.project_id and b.block < k.block and b.block >= k.block - interval '1 day'
      order by b.block desc limit 1
    ) as p on true`.execute(db)
  const written = rows.map((row) => {
    const addition = additions[Number(row.i) - 1] as TextBlockWords
    const filter = row.filter === null
      ? BlockFilter.empty(blockFilterBits(Math.max(row.previous_words ?? 0, addition.words.size)))
      : BlockFilter.fromBitText(row.filter, row.words ?? 0)
    const hashes = addition.words.hashes()
    for (let i = 0; i < hashes.length; i++) filter.add(hashes[i] as number)
    return { project_id: addition.projectId, block: blocks[Number(row.i) - 1] as string, words: filter.words, filter: filter.toHex() }
  })
  // In key order, so that two writers of the same blocks (a fold and the janitor) lock them in one order.
  written.sort((a, b) => (a.project_id === b.project_id ? (a.block < b.block ? -1 : 1) : a.project_id < b.project_id ? -1 : 1))
  await sql`
    insert into trace_text_blocks (project_id, block, words, filter)
    select project_id, block, words, ('x' || filter)::varbit
    from json_to_recordset(${JSON.stringify(written)}::json) as b(project_id text, block timestamptz, words integer, filter text)
    on conflict (project_id, block) do update set words = excluded.words, filter = excluded.filter`.execute(db)
}

/** A stored trace whose words are read again from its spans. */
export interface StoredTraceRef {
  project_id: string
  trace_id: string
  /** Its first span's start and its last span's end (ISO 8601): every span of it starts between them. */
  start_time: string
  end_time: string
}

/**
 * The words of the given traces' spans (attributes, events and status messages, read as the
 * writer reads them), keyed `project_id \0 trace_id`: for a trace whose words a summary delta did
 * not carry, or whose block changed. Each trace's spans found by primary key within its own time,
 * one or two day partitions.
 */
export async function wordsOfStoredTraces(db: Executor, traces: readonly StoredTraceRef[]): Promise<Map<string, TextFilterWords>> {
  const words = new Map<string, TextFilterWords>()
  if (traces.length === 0) return words
  const { rows } = await sql<{ i: string; attributes: string; events: string; status_message: string | null }>`
    select k.i, s.attributes, s.events, s.status_message
    from unnest(${traces.map((trace) => trace.project_id)}::text[], ${traces.map((trace) => trace.trace_id)}::text[],
      ${traces.map((trace) => trace.start_time)}::timestamptz[], ${traces.map((trace) => trace.end_time)}::timestamptz[])
      with ordinality as k(project_id, trace_id, start_time, end_time, i)
    cross join lateral (
      select attributes::text as attributes, events::text as events, status_message from spans s
      where s.project_id = k.project_id and s.trace_id = k.trace_id and s.start_time >= k.start_time and s.start_time <= k.end_time
      offset 0
    ) as s`.execute(db)
  for (const trace of traces) words.set(`${trace.project_id}\u0000${trace.trace_id}`, new TextFilterWords())
  for (const row of rows) {
    const trace = traces[Number(row.i) - 1] as StoredTraceRef
    const into = words.get(`${trace.project_id}\u0000${trace.trace_id}`) as TextFilterWords
    into.addJson(Buffer.from(row.attributes))
    into.addJson(Buffer.from(row.events))
    if (row.status_message) into.addJson(Buffer.from(JSON.stringify(row.status_message)))
  }
  return words
}
