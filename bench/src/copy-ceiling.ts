// The raw ceiling of bench:ingest: the same span rows the pipeline stores, written by `COPY`
// (psql, CSV) straight into a copy of the spans table with the same columns, keys and indexes.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { nanosToIsoMicros, sql, type Db } from '@tracewell/db'
import { decodeJsonTraces, type SpanRecord } from '@tracewell/otlp'
import { bodyFactory, type SpanSize } from './llm-spans.ts'
import { serverCpuSeconds } from './process-stats.ts'

const copyColumns = [
  'project_id', 'trace_id', 'span_id', 'parent_span_id', 'name', 'kind', 'start_time', 'end_time', 'duration_ns', 'trace_state',
  'status_code', 'status_message', 'service_name', 'service_version', 'scope_name', 'scope_version', 'llm_vendor', 'llm_model',
  'llm_request_type', 'input_tokens', 'output_tokens', 'total_tokens', 'attributes', 'resource_attributes', 'events', 'links',
] as const

function csvField(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value)
  return `"${text.replaceAll('"', '""')}"`
}

function csvRow(projectId: string, traceId: string, span: SpanRecord): string {
  return [
    projectId, traceId, span.spanId, span.parentSpanId, span.name, span.kind, nanosToIsoMicros(span.startTimeUnixNano), nanosToIsoMicros(span.endTimeUnixNano),
    span.durationNs, span.traceState, span.statusCode, span.statusMessage, span.serviceName, span.serviceVersion, span.scopeName, span.scopeVersion,
    span.llmVendor, span.llmModel, span.llmRequestType, span.inputTokens, span.outputTokens, span.totalTokens, span.attributes,
    span.resourceAttributes, span.events, span.links,
  ].map(csvField).join(',')
}

export interface CopyCeiling {
  /** One COPY of every row into the emptied table: rows per second. */
  measure(): Promise<number>
  /** Postgres's CPU a row in each COPY measured so far, in µs: what storing the rows alone costs it. */
  readonly postgresMicrosPerRow: readonly number[]
  drop(): Promise<void>
}

/** Builds the CSV of `rows` spans once (the same 100-span bodies the load sends) and the table they go into. */
export async function prepareCopyCeiling(db: Db, databaseUrl: string, projectId: string, rows: number, size: SpanSize = 'large'): Promise<CopyCeiling> {
  await sql`create table spans_copy (like spans including all)`.execute(db)
  const nextBody = bodyFactory(100, size)
  const lines: string[] = []
  while (lines.length < rows) {
    const { spans } = decodeJsonTraces(JSON.parse(nextBody()))
    for (const span of spans) lines.push(csvRow(projectId, span.traceId, span))
  }
  const csv = Buffer.from(`${lines.join('\n')}\n`)
  const postgresMicrosPerRow: number[] = []
  return {
    postgresMicrosPerRow,
    async measure() {
      await sql`truncate spans_copy`.execute(db)
      const postgresBefore = serverCpuSeconds('postgres')
      const started = process.hrtime.bigint()
      const psql = spawn('psql', [databaseUrl, '-v', 'ON_ERROR_STOP=1', '-q', '-c', `\\copy spans_copy (${copyColumns.join(', ')}) from stdin with (format csv)`], { stdio: ['pipe', 'inherit', 'inherit'] })
      psql.stdin.end(csv)
      const [code] = (await once(psql, 'exit')) as [number]
      const seconds = Number(process.hrtime.bigint() - started) / 1e9
      postgresMicrosPerRow.push(((serverCpuSeconds('postgres') - postgresBefore) / lines.length) * 1e6)
      if (code !== 0) throw new Error(`psql \\copy exited with ${code}`)
      const { rows: counted } = await sql<{ count: string }>`select count(*)::text as count from spans_copy`.execute(db)
      if (Number(counted[0]?.count) !== lines.length) throw new Error('COPY stored a different number of rows')
      return lines.length / seconds
    },
    async drop() {
      await sql`drop table spans_copy`.execute(db)
    },
  }
}
