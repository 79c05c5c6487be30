// npm run bench:records — what the queue's records layout costs ingest and the writer a span, with
// no database: layout 3 (each span's attributes and events as JSON texts after the rest, stored by
// the writer as they are) against layout 2 (every value inside one JSON), measured in the same
// run, alternating, on the shapes of bench:writer. CPU of this process, so the figures do not
// depend on the machine's cores.
//
// - ingest: encoding the records of one request (encodeSpanRecords); layout 2 is JSON.stringify of
//   the same values already laid out by position, so its figure leaves out laying them out (it
//   flatters layout 2);
// - writer: parsing a body (decodeSpanRecordsToStore, which reads both layouts), encoding its
//   spans into binary COPY data and folding them into the row of summary_deltas it makes, words included, as
//   storeSpans has its SpanCopyEncoder do.
//
// Settings: ROUNDS (default 40) alternated measurements of each layout a shape.
import { decodeSpanRecordsToStore, decodeTraceBody, encodeSpanRecords, type SpanRecord } from '@tracewell/otlp'
import { SpanCopyEncoder, SummaryDelta } from '@tracewell/write-path'
import { bodyFactory, type SpanSize } from './llm-spans.ts'
import { median } from './statistics.ts'

const rounds = Number(process.env.ROUNDS ?? 40)
const out = (line: string) => process.stdout.write(`${line}\n`)

interface Shape {
  label: string
  spansPerTrace: number
  size: SpanSize
}
const shapes: Shape[] = [
  { label: 'one-span traces, small spans', spansPerTrace: 1, size: 'small' },
  { label: 'ten-span traces, small spans', spansPerTrace: 10, size: 'small' },
  { label: '100-span traces, large spans', spansPerTrace: 100, size: 'large' },
]

/** A layout-2 body of the same spans: the layout-3 body's JSON with each span's texts put back in place. */
function layout2Of(body: Buffer, spans: readonly SpanRecord[]): { value: object; body: Buffer } {
  const head = JSON.parse(body.subarray(0, body.indexOf(0x0a)).toString()) as { resources: unknown[]; spans: unknown[][] }
  const rows = head.spans.map((row, at) => Object.assign([...row], { 10: spans[at]?.attributes, 11: spans[at]?.events }))
  const value = { v: 2, resources: head.resources, spans: rows }
  return { value, body: Buffer.from(JSON.stringify(value)) }
}

/** CPU µs of `work` a span. */
function cpuMicros(spans: number, work: () => void): number {
  const before = process.cpuUsage()
  work()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / spans
}

out(`records layouts, ${rounds} alternated rounds a shape (CPU µs a span; ratio layout 3 / layout 2)`)
for (const shape of shapes) {
  // About 6,000 spans a round, queued as ingest groups them: a job of about 60 spans.
  const next = bodyFactory(shape.spansPerTrace, shape.size)
  const requests = Array.from({ length: Math.max(6, Math.round(6_000 / shape.spansPerTrace)) }, () => decodeTraceBody(Buffer.from(next()), 'json').spans)
  const spanCount = requests.length * shape.spansPerTrace
  const perJob = Math.max(1, Math.round(60 / shape.spansPerTrace))
  const layout3 = requests.map((spans) => encodeSpanRecords(spans))
  const layout2 = requests.map((spans, at) => layout2Of(layout3[at] as Buffer, spans))
  const layout2Bodies = layout2.map((layout) => layout.body)

  const write = (bodies: readonly Buffer[]) => () => {
    for (let job = 0; job < bodies.length; job += perJob) {
      const delta = new SummaryDelta()
      const encoder = new SpanCopyEncoder({
        span: (projectId, span) => delta.add(projectId, span),
        searchableText: (bytes, start, end) => delta.addWordsOfLastSpan(bytes, start, end),
        sourceEnd: () => delta.endSource(),
      })
      for (const body of bodies.slice(job, job + perJob)) encoder.add({ projectId: 'bench', spans: () => decodeSpanRecordsToStore(body) })
      encoder.finish()
      delta.values()
    }
  }
  const encode3 = () => { for (const spans of requests) encodeSpanRecords(spans) }
  const encode2 = () => { for (const { value } of layout2) Buffer.from(JSON.stringify(value)) }
  const figures = { encode2: [] as number[], encode3: [] as number[], write2: [] as number[], write3: [] as number[] }
  // Warm-up: every path compiled before anything is counted.
  for (let round = 0; round < 5; round++) [encode2, encode3, write(layout2Bodies), write(layout3)].forEach((work) => work())
  for (let round = 0; round < rounds; round++) {
    figures.encode2.push(cpuMicros(spanCount, encode2))
    figures.encode3.push(cpuMicros(spanCount, encode3))
    figures.write2.push(cpuMicros(spanCount, write(layout2Bodies)))
    figures.write3.push(cpuMicros(spanCount, write(layout3)))
  }
  const [e2, e3, w2, w3] = [figures.encode2, figures.encode3, figures.write2, figures.write3].map(median) as [number, number, number, number]
  const bytes = (bodies: readonly Buffer[]) => bodies.reduce((sum, body) => sum + body.length, 0) / spanCount
  out(
    `${shape.label}: writer ${w3.toFixed(2)} µs against ${w2.toFixed(2)} (${(w3 / w2).toFixed(2)}); ingest ${e3.toFixed(2)} against ${e2.toFixed(2)} (${(e3 / e2).toFixed(2)}); both ${(w3 + e3).toFixed(2)} against ${(w2 + e2).toFixed(2)} (${((w3 + e3) / (w2 + e2)).toFixed(2)}); ${bytes(layout3).toFixed(0)} B a span queued against ${bytes(layout2Bodies).toFixed(0)}`,
  )
}
