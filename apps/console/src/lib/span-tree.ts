import type { Span } from '../api/types.ts'

/** One row of the waterfall: a span, where it sits in the tree, and where its bar goes. */
export interface WaterfallRow {
  span: Span
  depth: number
  /** Spans directly under this one. */
  childCount: number
  /** Offset and length of the bar on the trace's time axis, as fractions of the trace (0–1). */
  offset: number
  width: number
  /** Microseconds from the trace's start. */
  startMicros: number
  durationMicros: number
  isError: boolean
}

export interface Waterfall {
  rows: WaterfallRow[]
  /** Microseconds from the first span's start to the last span's end. */
  totalMicros: number
  /** Microseconds since the Unix epoch of the first span's start. */
  startMicros: number
}

/**
 * Nanosecond strings as microseconds: a double holds microsecond epochs exactly, nanosecond ones
 * not. Cutting the last three digits off the text costs far less than BigInt arithmetic, which
 * matters for a trace of thousands of spans.
 */
export function nanosToMicros(nanos: string): number {
  return nanos.length <= 3 ? 0 : Number(nanos.slice(0, -3))
}

/**
 * The spans in tree order: each span's children follow it, by start time. A span whose parent is
 * not in the trace (not received, or sent later) is shown as a root, never lost. Iterative, so a
 * trace thousands of spans deep cannot overflow the stack.
 */
export function buildWaterfall(spans: readonly Span[]): Waterfall {
  if (spans.length === 0) return { rows: [], totalMicros: 0, startMicros: 0 }
  const starts = new Map<Span, number>()
  const ends = new Map<Span, number>()
  let first = Infinity
  let last = -Infinity
  for (const span of spans) {
    const start = nanosToMicros(span.startTimeUnixNano)
    const end = nanosToMicros(span.endTimeUnixNano)
    starts.set(span, start)
    ends.set(span, end)
    if (start < first) first = start
    if (end > last) last = end
  }
  const total = Math.max(last - first, 1)

  const ids = new Set(spans.map((span) => span.spanId))
  const children = new Map<string, Span[]>()
  const roots: Span[] = []
  for (const span of spans) {
    const parent = span.parentSpanId
    if (parent && parent !== span.spanId && ids.has(parent)) {
      const siblings = children.get(parent)
      if (siblings) siblings.push(span)
      else children.set(parent, [span])
    } else {
      roots.push(span)
    }
  }
  const byStart = (a: Span, b: Span) => (starts.get(a) as number) - (starts.get(b) as number) || (a.spanId < b.spanId ? -1 : 1)
  roots.sort(byStart)
  for (const siblings of children.values()) siblings.sort(byStart)

  const rows: WaterfallRow[] = []
  const visited = new Set<string>()
  const stack: Array<{ span: Span; depth: number }> = roots.map((span) => ({ span, depth: 0 })).reverse()
  while (stack.length > 0) {
    const { span, depth } = stack.pop() as { span: Span; depth: number }
    // A cycle of parent ids (a malformed trace) must not loop for ever.
    if (visited.has(span.spanId)) continue
    visited.add(span.spanId)
    const start = (starts.get(span) as number) - first
    const duration = Math.max((ends.get(span) as number) - (starts.get(span) as number), 0)
    const kids = children.get(span.spanId) ?? []
    rows.push({
      span,
      depth,
      childCount: kids.length,
      offset: start / total,
      width: duration / total,
      startMicros: start,
      durationMicros: duration,
      isError: span.status?.code === 2,
    })
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ span: kids[i] as Span, depth: depth + 1 })
  }
  // Spans only reachable through a cycle are still shown.
  for (const span of spans) {
    if (visited.has(span.spanId)) continue
    const start = (starts.get(span) as number) - first
    const duration = Math.max((ends.get(span) as number) - (starts.get(span) as number), 0)
    rows.push({ span, depth: 0, childCount: 0, offset: start / total, width: duration / total, startMicros: start, durationMicros: duration, isError: span.status?.code === 2 })
  }
  return { rows, totalMicros: total, startMicros: first }
}

/** The rows left visible when the subtrees under `collapsed` span ids are folded away. */
export function visibleRows(rows: readonly WaterfallRow[], collapsed: ReadonlySet<string>): WaterfallRow[] {
  if (collapsed.size === 0) return rows as WaterfallRow[]
  const visible: WaterfallRow[] = []
  let hiddenBelowDepth = Infinity
  for (const row of rows) {
    if (row.depth > hiddenBelowDepth) continue
    hiddenBelowDepth = Infinity
    visible.push(row)
    if (collapsed.has(row.span.spanId) && row.childCount > 0) hiddenBelowDepth = row.depth
  }
  return visible
}
