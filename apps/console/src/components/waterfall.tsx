import { useVirtualizer } from '@tanstack/react-virtual'
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react'
import { formatDuration } from '../lib/format.ts'
import { visibleRows, type Waterfall as WaterfallModel, type WaterfallRow } from '../lib/span-tree.ts'

const rowHeight = 30
const indentPx = 14
// Deep traces would push names off the row; past this depth the indent stops growing (the level
// is still announced and shown on hover).
const maxIndentDepth = 24

export interface WaterfallProps {
  waterfall: WaterfallModel
  selectedSpanId: string | null
  onSelect: (spanId: string) => void
}

/**
 * The trace as a tree of spans on one time axis: each row a span, indented under its parent,
 * with its bar where it ran; errors in red. Only the rows in view are rendered (TanStack
 * Virtual), so a trace of thousands of spans scrolls as smoothly as a small one. Keyboard: a tree
 * (arrows move, Left/Right fold and unfold, Home/End).
 */
export function Waterfall({ waterfall, selectedSpanId, onSelect }: WaterfallProps) {
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set())
  const rows = useMemo(() => visibleRows(waterfall.rows, collapsed), [waterfall.rows, collapsed])
  const scrollRef = useRef<HTMLDivElement>(null)
  const virtualizer = useVirtualizer({ count: rows.length, getScrollElement: () => scrollRef.current, estimateSize: () => rowHeight, overscan: 20 })
  const selectedIndex = rows.findIndex((row) => row.span.spanId === selectedSpanId)
  const parentIndex = useMemo(() => parentIndexes(rows), [rows])

  // Bring the selected span into view when it is chosen from elsewhere (the URL, a link).
  useEffect(() => {
    if (selectedIndex >= 0) virtualizer.scrollToIndex(selectedIndex, { align: 'auto' })
  }, [selectedIndex, virtualizer])

  function toggle(spanId: string) {
    setCollapsed((current) => {
      const next = new Set(current)
      if (next.has(spanId)) next.delete(spanId)
      else next.add(spanId)
      return next
    })
  }

  // The span a key press moved to, until the selection (kept in the URL, so updated a render later)
  // catches up: keys pressed in quick succession each move on from the last one.
  const pending = useRef<string | null>(null)
  useEffect(() => {
    if (pending.current === selectedSpanId) pending.current = null
  }, [selectedSpanId])

  function onKeyDown(event: KeyboardEvent) {
    if (rows.length === 0) return
    const current = pending.current === null ? selectedIndex : rows.findIndex((row) => row.span.spanId === pending.current)
    const at = current < 0 ? 0 : current
    const row = rows[at] as WaterfallRow
    const go = (index: number) => {
      const target = rows[Math.max(0, Math.min(rows.length - 1, index))]
      if (!target) return
      pending.current = target.span.spanId
      onSelect(target.span.spanId)
    }
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 300) / rowHeight) - 1)
    switch (event.key) {
      case 'ArrowDown':
        go(current < 0 ? 0 : at + 1)
        break
      case 'ArrowUp':
        go(at - 1)
        break
      case 'PageDown':
        go(at + page)
        break
      case 'PageUp':
        go(at - page)
        break
      case 'Home':
        go(0)
        break
      case 'End':
        go(rows.length - 1)
        break
      case 'ArrowRight':
        if (row.childCount > 0 && collapsed.has(row.span.spanId)) toggle(row.span.spanId)
        else if (row.childCount > 0) go(at + 1)
        break
      case 'ArrowLeft':
        if (row.childCount > 0 && !collapsed.has(row.span.spanId)) toggle(row.span.spanId)
        else if ((parentIndex[at] ?? -1) >= 0) go(parentIndex[at] as number)
        break
      default:
        return
    }
    event.preventDefault()
  }

  const ticks = [0, 0.25, 0.5, 0.75, 1]
  const active = selectedIndex >= 0 ? rows[selectedIndex] : undefined

  return (
    <div className="waterfall">
      <div className="waterfall-axis" aria-hidden="true">
        <span className="waterfall-axis-name">Span</span>
        <span className="waterfall-axis-time">
          {ticks.map((tick) => (
            <span key={tick} style={{ left: `${tick * 100}%` }}>
              {tick === 0 ? '0' : formatDuration((waterfall.totalMicros * tick) / 1000)}
            </span>
          ))}
        </span>
      </div>
      <div
        className="waterfall-scroll"
        ref={scrollRef}
        role="tree"
        aria-label="Spans of the trace"
        tabIndex={0}
        aria-activedescendant={active ? `span-row-${active.span.spanId}` : undefined}
        onKeyDown={onKeyDown}
      >
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = rows[item.index] as WaterfallRow
            const { span } = row
            const isCollapsed = collapsed.has(span.spanId)
            const selected = span.spanId === selectedSpanId
            return (
              <div
                key={span.spanId}
                id={`span-row-${span.spanId}`}
                role="treeitem"
                aria-level={row.depth + 1}
                aria-selected={selected}
                aria-expanded={row.childCount > 0 ? !isCollapsed : undefined}
                className={['waterfall-row', selected ? 'selected' : '', row.isError ? 'error' : ''].join(' ')}
                style={{ transform: `translateY(${item.start}px)`, height: rowHeight }}
                onClick={() => onSelect(span.spanId)}
                title={`${span.name} — ${formatDuration(row.durationMicros / 1000)}${row.isError ? ' (error)' : ''}, level ${row.depth + 1}`}
              >
                <span className="waterfall-name" style={{ paddingLeft: Math.min(row.depth, maxIndentDepth) * indentPx }} title={span.llmModel ? `${span.name} · ${span.llmModel}` : span.name}>
                  {row.childCount > 0 ? (
                    <button
                      type="button"
                      className="fold"
                      tabIndex={-1}
                      aria-label={isCollapsed ? `Show the ${row.childCount} spans under ${span.name}` : `Hide the spans under ${span.name}`}
                      onClick={(event) => {
                        event.stopPropagation()
                        toggle(span.spanId)
                      }}
                    >
                      {isCollapsed ? '▸' : '▾'}
                    </button>
                  ) : (
                    <span className="fold-space" />
                  )}
                  {row.isError && (
                    <span className="error-mark" aria-label="error">
                      !
                    </span>
                  )}
                  <span className="span-name">{span.name}</span>
                  {span.llmModel && <span className="tag small">{span.llmModel}</span>}
                </span>
                <span className="waterfall-track">
                  <span className="waterfall-bar" style={{ left: `${row.offset * 100}%`, width: `max(2px, ${row.width * 100}%)` }} />
                  <span className={labelInside(row) ? 'waterfall-duration inside' : 'waterfall-duration'} style={labelPosition(row)}>
                    {formatDuration(row.durationMicros / 1000)}
                  </span>
                </span>
              </div>
            )
          })}
        </div>
      </div>
    </div>
  )
}

// A bar's duration goes after its end; when the bar reaches the right edge, inside its end (long
// bars) or before its start (short ones), so the label never runs off the track or over the bar.
const roomAfter = 0.82

function labelInside(row: WaterfallRow): boolean {
  return row.offset + row.width > roomAfter && row.width >= 0.15
}

function labelPosition(row: WaterfallRow) {
  const end = row.offset + row.width
  if (end <= roomAfter) return { left: `calc(${end * 100}% + 4px)` }
  if (labelInside(row)) return { right: `calc(${(1 - end) * 100}% + 4px)` }
  return { right: `calc(${(1 - row.offset) * 100}% + 4px)` }
}

/** For each visible row, the index of its parent's row (-1 for roots). */
function parentIndexes(rows: readonly WaterfallRow[]): number[] {
  const result: number[] = []
  const lastAtDepth: number[] = []
  rows.forEach((row, index) => {
    result.push(row.depth === 0 ? -1 : (lastAtDepth[row.depth - 1] ?? -1))
    lastAtDepth[row.depth] = index
    lastAtDepth.length = row.depth + 1
  })
  return result
}
